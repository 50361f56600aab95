import { assertError, type Asserts } from '../gateway/expect.ts';
import type { ApiResponse } from './client.ts';
import { eventBody, levelZeroCounts, outboxIds, receivedIds, type FullStack } from './full-stack.ts';
import { eventually, sleep } from './platform.ts';

/**
 * What the fault tests assert about a burst of events posted while a dependency went away: how it was answered,
 * and that every event was then processed exactly once.
 */
type Test = Asserts & { comment(...m: unknown[]): void };

/** POSTs `count` purchase events, one every `everyMs` without waiting for answers: a burst that outlasts a fault. */
export async function pacedBurst(
  stack: FullStack,
  tag: string,
  count: number,
  everyMs: number,
): Promise<ApiResponse[]> {
  const sent: Promise<ApiResponse>[] = [];
  for (let i = 0; i < count; i++) {
    sent.push(stack.merchant.client.post('/api/v1/events', eventBody(tag, i)));
    await sleep(everyMs);
  }
  return Promise.all(sent);
}

/**
 * Only 201 and 503 answers (never 500), some 503 (UNAVAILABLE, with Retry-After); then the 503s retried as a client
 * would, after a pause, until answered: 200 or 201 each (recorded once, whether or not the first try got through).
 */
export async function assertAnsweredAndRetry(t: Test, stack: FullStack, responses: ApiResponse[], tag: string) {
  const statuses = new Map<number, number>();
  for (const r of responses) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
  const others = responses.filter((r) => r.status !== 201 && r.status !== 503).map((r) => `${r.status} ${r.text}`);
  t.same(others, [], `only 201 and 503 (${JSON.stringify([...statuses])})`);
  if (others.length > 0) {
    const lines = [...stack.platform.logs, ...Object.values(stack.logs).flat()];
    t.comment(
      lines
        .filter((l) => /"level":"error"/.test(l) && !/authentication failed/.test(l))
        .slice(0, 5)
        .join('\n'),
    );
  }
  t.ok((statuses.get(503) ?? 0) > 0, 'some requests met the fault and were told to retry');
  for (const r of responses.filter((r) => r.status === 503).slice(0, 3)) {
    assertError(t, r, 503, 'UNAVAILABLE');
    t.match(r.headers.get('retry-after'), /^\d+$/, 'with Retry-After');
  }
  // A dependency that just came back may fail one more try (a connection killed in the last round); 40 tries
  // 250 ms apart are plenty.
  const final: number[] = [];
  for (let i = 0; i < responses.length; i++) {
    if (responses[i]!.status !== 503) continue;
    let status = 503;
    for (let n = 0; n < 40 && status === 503; n++) {
      if (n > 0) await sleep(250);
      status = (await stack.merchant.client.post('/api/v1/events', eventBody(tag, i))).status;
    }
    final.push(status);
  }
  t.same(
    final.filter((s) => s !== 200 && s !== 201),
    [],
    `every retry answered 200 or 201 (${final.length} retried)`,
  );
}

/**
 * Every event `${tag}-0 … ${tag}-${count - 1}`: exactly one level-0 commission and one commission.created, whose
 * webhook arrived (at least once); every service ready again.
 */
export async function assertProcessedOnce(t: Test, stack: FullStack, tag: string, count: number, timeoutMs = 60_000) {
  const { sql } = stack.platform;
  const orders = Array.from({ length: count }, (_, i) => `${tag}-${i}`);
  await eventually(
    async () => {
      const counts = await levelZeroCounts(sql, stack.merchant.id, tag);
      return orders.every((o) => counts.has(o)) ? true : undefined;
    },
    timeoutMs,
    'a level-0 commission for every event',
  ).catch(async (err: unknown) => {
    // What the services said, to tell a slow recovery from a stalled one.
    const counts = await levelZeroCounts(sql, stack.merchant.id, tag);
    t.comment(`missing: ${orders.filter((o) => !counts.has(o)).length} of ${count}`);
    for (const [name, lines] of Object.entries(stack.logs)) {
      t.comment(
        `${name}: ${lines
          .filter((l) => /"level":"(warn|error)"/.test(l))
          .slice(-8)
          .join('\n')}`,
      );
    }
    throw err;
  });
  await sleep(2000); // any duplicate would have appeared by now
  const counts = await levelZeroCounts(sql, stack.merchant.id, tag);
  t.equal(counts.size, count, 'every event has its commission');
  t.same(
    [...counts.values()].filter((n) => n !== 1),
    [],
    'exactly one level-0 commission each',
  );

  const messages = await outboxIds(sql, stack.merchant.id, 'commission.created', tag);
  t.equal(messages.length, count, 'one commission.created each');
  await eventually(
    async () => (messages.every((id) => receivedIds(stack, 'commission.created').has(id)) ? true : undefined),
    timeoutMs,
    'every webhook',
  );
  for (const [name, service] of Object.entries(stack.services)) {
    t.equal((await fetch(`http://127.0.0.1:${service.opsPort}/readyz`)).status, 200, `${name} ready again`);
  }
}
