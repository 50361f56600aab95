import type { ApiResponse } from './client.ts';
import { eventBody, type FullStack } from './full-stack.ts';
import { sleep } from './platform.ts';

/** One API call of a steady flow: what it was, when it was sent and answered, and the answer. */
export interface FlowCall {
  kind: 'event' | 'affiliate';
  /** The event's or affiliate's index within the flow (its external id or e-mail is made from it). */
  index: number;
  sentAt: number;
  answeredAt: number;
  response: ApiResponse;
}

/**
 * A steady flow of API calls through the gateway while a fault is played out: a purchase event every `everyMs`
 * (attributed by the stack's coupon, so each makes a commission and a commission.created webhook) and a new affiliate
 * every `affiliateEvery` events (an affiliate.created webhook). Calls go out on time whether or not earlier ones have
 * been answered, as independent clients' would. `stop` ends it and answers every call, once all are answered.
 */
export function startSteadyFlow(stack: FullStack, tag: string, opts: { everyMs: number; affiliateEvery: number }) {
  const calls: Promise<FlowCall>[] = [];
  let stopped = false;
  let events = 0;
  let affiliates = 0;
  const send = (kind: FlowCall['kind'], index: number) => {
    const sentAt = Date.now();
    calls.push(
      callOf(stack, tag, kind, index).then((response) => ({ kind, index, sentAt, answeredAt: Date.now(), response })),
    );
  };
  const running = (async () => {
    while (!stopped) {
      send('event', events++);
      if (events % opts.affiliateEvery === 0) send('affiliate', affiliates++);
      await sleep(opts.everyMs);
    }
  })();
  return {
    async stop(): Promise<FlowCall[]> {
      stopped = true;
      await running;
      return Promise.all(calls);
    },
  };
}

export const affiliateEmail = (tag: string, i: number) => `${tag}-${i}@example.com`;

/**
 * The flow's call `index` of `kind`, sent (again): an event carries its external id, an affiliate an Idempotency-Key,
 * so sending one again records nothing twice. A call that gets no HTTP answer at all is status 0, reported with the
 * rest rather than thrown.
 */
function callOf(stack: FullStack, tag: string, kind: FlowCall['kind'], index: number): Promise<ApiResponse> {
  const sent =
    kind === 'event'
      ? stack.merchant.client.post('/api/v1/events', eventBody(tag, index))
      : stack.merchant.client.post(
          '/api/v1/affiliates',
          { email: affiliateEmail(tag, index) },
          { headers: { 'idempotency-key': `${tag}-affiliate-${index}` } },
        );
  return sent.catch((err: unknown) => ({ status: 0, headers: new Headers(), body: undefined, text: String(err) }));
}

/**
 * Sends a call answered 503 again, as a client told to retry would, until it is answered otherwise: that status.
 * A 409 with Retry-After is a retry too: the key's first request may still be running, its outcome not yet known
 * (the gateway gave up on it, the service may still commit), and the API says to retry it later.
 */
export async function retryUntilAnswered(stack: FullStack, tag: string, call: FlowCall): Promise<number> {
  let answer: ApiResponse | undefined;
  const retryLater = (res: ApiResponse) => res.status === 503 || (res.status === 409 && res.headers.has('retry-after'));
  for (let n = 0; n < 80 && (!answer || retryLater(answer)); n++) {
    await sleep(250);
    answer = await callOf(stack, tag, call.kind, call.index);
  }
  return answer!.status;
}

/** The longest time between two consecutive 201 answers, and the first 201 to a call sent at or after `at`. */
export function createdGaps(calls: FlowCall[]) {
  const created = calls.filter((c) => c.response.status === 201).sort((a, b) => a.answeredAt - b.answeredAt);
  let longest = 0;
  for (let i = 1; i < created.length; i++)
    longest = Math.max(longest, created[i]!.answeredAt - created[i - 1]!.answeredAt);
  return {
    longestMs: longest,
    /** Milliseconds from `at` to the first 201 answer to a call sent at or after it (Infinity: none). */
    recoveryMs(at: number): number {
      const first = created.filter((c) => c.sentAt >= at).map((c) => c.answeredAt);
      return first.length ? Math.min(...first) - at : Infinity;
    },
  };
}
