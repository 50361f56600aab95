/**
 * Starts batched work at the end of the event loop's current turn, but never sooner than `intervalMs` after it last
 * started: `kick()` asks for a start, and any number of kicks before it happens ask for the same one.
 *
 * Why: on the conversion path a batch's fixed costs (a statement's round trip, a commit, a JetStream exchange, a
 * socket write in each process it wakes) are most of what one event costs. Under a steady moderate load a batch that
 * starts the moment the previous one finishes carries one or two events and pays those costs for each; spacing the
 * starts lets one batch carry everything that arrived in the interval. A lone request after a quiet spell starts at
 * once (at the end of its turn), so the interval adds latency only while traffic is arriving faster than one event
 * per interval, and then at most the interval. The outbox relay and the commissions service's consumer run with
 * longer intervals than the recording of events, which answers an HTTP request.
 */
export function createPacer(intervalMs: number, start: () => void): { kick(): void; stop(): void } {
  let lastStart = -Infinity;
  let scheduled = false;
  let timer: NodeJS.Timeout | null = null;
  const run = () => {
    scheduled = false;
    timer = null;
    lastStart = performance.now();
    start();
  };
  return {
    kick() {
      if (scheduled) return;
      scheduled = true;
      const wait = lastStart + intervalMs - performance.now();
      if (wait > 0) timer = setTimeout(run, Math.ceil(wait));
      else setImmediate(run);
    },
    /** Cancels a start that waits for its interval (a start queued for the end of the turn still runs). */
    stop() {
      if (timer) clearTimeout(timer);
      timer = null;
      scheduled = false;
    },
  };
}
