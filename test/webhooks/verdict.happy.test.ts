import t from 'tap';
import { nextAttemptDelayMs, WEBHOOK_MAX_ATTEMPTS } from '@platform/shared/webhooks';
import { deadLetterReasonOf, judgeAttempt, statusAfter, type Verdict } from '@platform/dispatcher/domain/verdict';

// The delivery state table as the dispatcher applies it, without a database or a receiver.
const delay = (attemptsMade: number, retryAfterMs: number | null) => nextAttemptDelayMs(attemptsMade, 1, retryAfterMs);
const judge = (statusCode: number | null, attemptsMade = 1, retryAfterMs: number | null = null) =>
  judgeAttempt({ statusCode, retryAfterMs }, attemptsMade, WEBHOOK_MAX_ATTEMPTS, delay);

t.test('2xx succeeds', async (t) => {
  for (const code of [200, 201, 204, 299]) t.same(judge(code), { kind: 'succeeded' }, String(code));
  t.same(judge(200, WEBHOOK_MAX_ATTEMPTS), { kind: 'succeeded' }, 'even on the last attempt');
});

t.test('410 is gone: dead-lettered, the endpoint disabled', async (t) => {
  t.same(judge(410), { kind: 'gone' });
  t.equal(statusAfter(judge(410)), 'dead_lettered');
  t.equal(deadLetterReasonOf(judge(410)), 'gone');
});

t.test('any other 4xx but 429 is dead-lettered at once', async (t) => {
  for (const code of [400, 401, 403, 404, 409, 413, 422, 499]) {
    t.same(judge(code), { kind: 'client_error' }, String(code));
    t.equal(deadLetterReasonOf(judge(code)), 'client_error');
  }
});

t.test(
  '429, 5xx, 3xx, timeouts and network errors are retried by the backoff table until the last attempt',
  async (t) => {
    for (const code of [429, 500, 502, 503, 504, 301, 302, 307, null]) {
      const verdict = judge(code, 1);
      t.same(verdict, { kind: 'retry', delayMs: delay(1, null) }, `${code}: retried after the first step of the table`);
      t.equal(statusAfter(verdict), 'retrying');
      t.equal(deadLetterReasonOf(verdict), null);
      t.same(judge(code, WEBHOOK_MAX_ATTEMPTS), { kind: 'max_attempts' }, `${code}: the last attempt dead-letters`);
    }
    t.equal(WEBHOOK_MAX_ATTEMPTS, 10, 'ten attempts in all');
  },
);

t.test('Retry-After is honoured', async (t) => {
  const verdict = judge(503, 2, 120_000) as Extract<Verdict, { kind: 'retry' }>;
  t.equal(verdict.delayMs, delay(2, 120_000));
  t.ok(verdict.delayMs >= 120_000, 'not sooner than the receiver asked');
});

t.test('the status after each verdict', async (t) => {
  t.same(
    (['succeeded', 'retry', 'gone', 'client_error', 'max_attempts'] as const).map((kind) =>
      statusAfter(kind === 'retry' ? { kind, delayMs: 5000 } : { kind }),
    ),
    ['succeeded', 'retrying', 'dead_lettered', 'dead_lettered', 'dead_lettered'],
  );
  t.equal(deadLetterReasonOf({ kind: 'max_attempts' }), 'max_attempts');
  t.equal(deadLetterReasonOf({ kind: 'succeeded' }), null);
});
