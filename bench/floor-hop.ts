import type { AddressInfo } from 'node:net';
import type { Msg } from '@nats-io/transport-node';
import express from 'express';
import { connectDatabase } from '@platform/shared/db';
import { connectNats } from '@platform/shared/nats';
import { createTurnBatch } from '@platform/shared/turn-batch';
import { createRequester } from '../services/gateway/src/http/requester.ts';

/**
 * The floor of the design on this machine: what a GET costs when it takes the design's hops and does nothing else.
 * Two processes, started by bench/run.ts with an IPC channel (FLOOR_ROLE):
 *
 * - `front`: express 5 with no middleware; GET /api/v1/affiliates sends an empty request over NATS with the
 *   gateway's own requester and answers 200 with the reply's bytes. No auth, no rate limit, no validation.
 * - `responder`: subscribes to the subject and answers with the 25-row page held in memory, after one Postgres
 *   round trip (`select 1` on a pool like a service's) when FLOOR_QUERY=1. Replies leave once per event-loop
 *   turn, as the services' do.
 *
 * The gateway and the affiliates service do all of this plus their work, so their rate cannot exceed the floor's:
 * when the floor itself is below a target, the target is out of reach of this design on this machine.
 */

const role = process.env['FLOOR_ROLE'];
const natsUrl = process.env['NATS_URL'];
const subject = process.env['FLOOR_SUBJECT'];
if (!process.send || !natsUrl || !subject || (role !== 'front' && role !== 'responder')) {
  process.stderr.write(
    'bench/floor-hop.ts is started by bench/run.ts (FLOOR_ROLE, NATS_URL, FLOOR_SUBJECT and an IPC channel)\n',
  );
  process.exit(2);
}

const nc = await connectNats(natsUrl, `bench-floor-${role}`);
process.once('disconnect', () => process.exit(0));
process.once('SIGTERM', () => process.exit(0));

if (role === 'front') {
  const requester = createRequester(nc);
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  const empty = new Uint8Array(0);
  app.get('/api/v1/affiliates', async (_req, res) => {
    const answer = await requester.request(subject, empty, 5_000);
    if (answer.kind !== 'reply') res.status(503).end();
    else
      res
        .type('application/json')
        .send(Buffer.from(answer.msg.data.buffer, answer.msg.data.byteOffset, answer.msg.data.byteLength));
  });
  const server = app.listen(0, '127.0.0.1', () => {
    server.keepAliveTimeout = 65_000;
    process.send!({ port: (server.address() as AddressInfo).port });
  });
} else {
  const databaseUrl = process.env['DATABASE_URL'];
  const query = process.env['FLOOR_QUERY'] === '1';
  if (query && !databaseUrl) throw new Error('FLOOR_QUERY=1 needs DATABASE_URL');
  const sql = query ? connectDatabase(databaseUrl!, { max: 10, applicationName: 'bench-floor' }) : undefined;
  if (sql) await sql`select 1`;
  process.once('message', (message: { page: string }) => {
    const page = Buffer.from(message.page);
    const respondInThisTurn = createTurnBatch((msg: Msg) => msg.respond(page));
    nc.subscribe(subject, {
      callback: (err, msg) => {
        if (err) return;
        if (!sql) return respondInThisTurn(msg);
        void sql`select 1`.then(() => respondInThisTurn(msg));
      },
    });
    void nc.flush().then(() => process.send!({ ready: true }));
  });
  process.send({ started: true });
}
