import { createServer } from 'node:net';
import t from 'tap';
import { freePort } from '../../scripts/infra.ts';

// npm start, the tests and the benchmarks pick several ports before any of them is bound. The kernel offers a port
// it has just been given back again (14 to 21 repeats in 500 picks here), which once made the gateway of the npm
// start test fail with EADDRINUSE on the port its affiliates service had taken for health checks.
t.test('freePort never hands out the same port twice in a process', async (t) => {
  const picks: number[] = [];
  for (let i = 0; i < 500; i++) picks.push(await freePort());
  t.equal(new Set(picks).size, picks.length, `${picks.length} picks, all different`);
});

t.test('a port from freePort can be listened on', async (t) => {
  const port = await freePort();
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  t.equal((server.address() as { port: number }).port, port);
  await new Promise<void>((resolve) => server.close(() => resolve()));
});
