/**
 * Defers work to the end of the event loop's current turn and runs everything deferred in that turn together:
 * `createTurnBatch(run)` answers a function that queues an item; at the end of the turn `run` is called for each
 * item queued, in order.
 *
 * Why: a socket write is a system call, and on loopback it costs more than most of the work of a request. The
 * NATS client flushes its outbound buffer once per microtask checkpoint, so publishes issued in one synchronous run
 * leave in one write, while publishes issued from separate I/O callbacks (one per HTTP request, one per query
 * result) leave in one write each. Under load many callbacks run in one turn of the loop; publishing from a
 * setImmediate after them turns their N writes into one, at the cost of no more than the rest of that turn.
 * Items rather than callbacks, so that what runs per item is one function made once (shared/src/unnest.ts says why).
 */
export function createTurnBatch<T>(run: (item: T) => void): (item: T) => void {
  let queued: T[] = [];
  const runQueued = () => {
    const batch = queued;
    queued = [];
    for (const item of batch) run(item);
  };
  return (item) => {
    if (queued.push(item) === 1) setImmediate(runQueued);
  };
}
