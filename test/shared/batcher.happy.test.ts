import t from 'tap';
import { createBatcher, type BatchShape } from '@platform/shared/batcher';

/** A batcher whose batches end when the test says: `ends[i]()` finishes the i-th batch, `fail(i)` fails it. */
function controlled(shape: BatchShape) {
  const batches: string[][] = [];
  const settle: { resolve(): void; reject(err: Error): void }[] = [];
  const failures: { err: unknown; batch: string[] }[] = [];
  const batcher = createBatcher<string>(
    shape,
    (batch) =>
      new Promise<void>((resolve, reject) => {
        batches.push(batch);
        settle.push({ resolve, reject });
      }),
    (err, batch) => failures.push({ err, batch }),
  );
  const endOf = async (i: number) => {
    settle[i]!.resolve();
    await batcher.oneEnded();
    await new Promise((r) => setImmediate(r));
  };
  return { batcher, batches, settle, failures, endOf };
}
const turnEnd = () => new Promise((r) => setImmediate(r));

t.test('slots and the largest batch bound what runs; what waits goes together when a slot frees', async (t) => {
  const { batcher, batches, endOf } = controlled({ slots: 2, largestBatch: 3, leastIntervalMs: null });
  batcher.add('a');
  batcher.add('b');
  t.same(batches, [['a'], ['b']], 'each lone item started at once in a free slot');
  for (const item of ['c', 'd', 'e', 'f']) batcher.add(item);
  t.equal(batcher.waiting, 4, 'with both slots busy, the rest waits');
  t.equal(batcher.inProgress, 2);
  await endOf(0);
  t.same(batches[2], ['c', 'd', 'e'], 'the next batch carries at most largestBatch items');
  await endOf(1);
  t.same(batches[3], ['f'], 'and the one after takes the rest');
  t.equal(batcher.waiting, 0);
});

t.test('with an interval, the items of one turn make one batch', async (t) => {
  const { batcher, batches } = controlled({ slots: 1, largestBatch: Infinity, leastIntervalMs: 0 });
  batcher.add('a');
  batcher.add('b');
  batcher.add('c');
  t.same(batches, [], 'nothing starts before the end of the turn');
  await turnEnd();
  t.same(batches, [['a', 'b', 'c']], 'one batch for the whole turn');
});

t.test('a full batch does not wait for the end of the turn', async (t) => {
  const { batcher, batches } = controlled({ slots: 1, largestBatch: 2, leastIntervalMs: 10_000 });
  batcher.add('a');
  batcher.add('b');
  t.same(batches, [['a', 'b']], 'started as soon as it was full');
});

t.test('startNow starts what waits without waiting for the interval', async (t) => {
  const { batcher, batches, endOf } = controlled({ slots: 1, largestBatch: Infinity, leastIntervalMs: 60_000 });
  batcher.add('a');
  await turnEnd();
  t.same(batches, [['a']], 'the first batch starts at the end of its turn');
  await endOf(0);
  batcher.add('b');
  await turnEnd();
  t.equal(batches.length, 1, 'the second waits for the interval since the first started');
  batcher.startNow();
  t.same(batches[1], ['b'], 'startNow started it');
  batcher.add('c');
  await endOf(1);
  t.equal(batches.length, 2, 'what came meanwhile still waits for the interval');
  t.same(await batcher.stop(), ['c'], 'stop cancels the wait and answers it');
});

t.test('a batch that throws goes to `failed`, and the batcher carries on', async (t) => {
  const { batcher, batches, settle, failures } = controlled({ slots: 1, largestBatch: 10, leastIntervalMs: null });
  batcher.add('a');
  batcher.add('b');
  settle[0]!.reject(new Error('database went away'));
  await batcher.oneEnded();
  t.equal(failures.length, 1);
  t.same(failures[0]!.batch, ['a'], 'the failed batch is handed over whole');
  t.match(failures[0]!.err, { message: 'database went away' });
  t.same(batches[1], ['b'], 'the next batch started after the failure');
});

t.test('stop waits for the batches in progress, starts no more, and answers what never started', async (t) => {
  const { batcher, batches, settle } = controlled({ slots: 1, largestBatch: 1, leastIntervalMs: null });
  batcher.add('a');
  batcher.add('b');
  batcher.add('c');
  let stopped: string[] | null = null;
  const stopping = batcher.stop().then((left) => (stopped = left));
  await turnEnd();
  t.equal(stopped, null, 'stop waits while a batch is in progress');
  settle[0]!.resolve();
  await stopping;
  t.same(stopped, ['b', 'c'], 'the items that never started come back');
  t.same(batches, [['a']], 'no batch started after stop');
  batcher.add('d');
  t.same(batches, [['a']], 'nor after an add');
});
