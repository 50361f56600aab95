import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { connectDatabase } from '@platform/shared/db';
import { createTestDatabase } from '../helpers/platform.ts';

// scripts/patch-dependencies.ts makes the postgres driver's pool queues search only their live slots. These tests
// check that the installed driver carries the fix and that the queues still behave as the pool needs them to.

const root = resolve(createRequire(import.meta.url).resolve('postgres'), '../../..');

interface DriverQueue<T> {
  readonly length: number;
  push(x: T): T;
  shift(): T | undefined;
  remove(x: T): T | null;
}

t.test('the installed postgres driver carries the queue fix', async (t) => {
  for (const file of ['src/queue.js', 'cjs/src/queue.js']) {
    t.match(readFileSync(resolve(root, file), 'utf8'), /const at = xs\.indexOf\(x, index\)/, file);
  }
});

t.test('a queue cycled as the pool cycles busy connections keeps its order and members', async (t) => {
  const { default: Queue } = (await import(pathToFileURL(resolve(root, 'src/queue.js')).href)) as {
    default: <T>() => DriverQueue<T>;
  };
  const busy = Queue<string>();
  const connections = Array.from({ length: 10 }, (_, i) => `c${i}`);
  for (const c of connections) busy.push(c);
  // handler(): take the next busy connection for a pipelined query, then move(c, busy): remove it (it is no longer
  // there: shift took it) and push it back at the end. Thousands of rounds leave thousands of dead slots behind.
  let found = 0;
  for (let i = 0; i < 5_000; i++) {
    const c = busy.shift()!;
    if (busy.remove(c) !== null) found++;
    busy.push(c);
  }
  t.equal(found, 0, 'a shifted connection is no longer in the queue');
  t.equal(busy.length, 10);
  // 5,000 rounds of 10 connections: each has come round 500 times, so the order is the original one.
  // A connection that finished its queries is removed from the middle (move(c, open)).
  t.equal(busy.remove('c3'), 'c3');
  t.equal(busy.remove('c3'), null, 'removed once');
  t.equal(busy.length, 9);
  const order: string[] = [];
  while (busy.length > 0) order.push(busy.shift()!);
  t.same(order, ['c0', 'c1', 'c2', 'c4', 'c5', 'c6', 'c7', 'c8', 'c9']);
  t.equal(busy.shift(), undefined);
  busy.push('c1');
  t.equal(busy.remove('c1'), 'c1');
  t.equal(busy.length, 0);
});

t.test('a pool of two under 64 concurrent callers answers every query', async (t) => {
  const { url } = await createTestDatabase(t);
  const sql = connectDatabase(url, { max: 2, applicationName: 'driver-queue' });
  t.teardown(() => sql.end({ timeout: 1 }));
  let answered = 0;
  await Promise.all(
    Array.from({ length: 64 }, async (_, caller) => {
      for (let i = 0; i < 50; i++) {
        const [row] = await sql<{ n: number }[]>`select ${caller * 1000 + i}::int as n`;
        if (row?.n === caller * 1000 + i) answered++;
      }
    }),
  );
  t.equal(answered, 64 * 50);
});
