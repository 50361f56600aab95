import t, { type Test } from 'tap';
import { createPacer } from '@platform/shared/pacer';

/**
 * createPacer starts batched work at the end of the turn, never sooner than its interval after the previous start:
 * a lone kick after a quiet spell costs no wait, kicks during the interval share one start at its end.
 */

const endOfTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A pacer that records when it started, kicked once and past that first start. */
async function startedPacer(t: Test, intervalMs: number) {
  const starts: number[] = [];
  const pacer = createPacer(intervalMs, () => starts.push(performance.now()));
  t.teardown(() => pacer.stop());
  pacer.kick();
  await endOfTurn();
  t.equal(starts.length, 1, 'the first kick started at the end of its turn');
  return { starts, pacer };
}

t.test('the first kick starts at the end of the turn, once for every kick of that turn', async (t) => {
  const starts: number[] = [];
  const pacer = createPacer(10_000, () => starts.push(performance.now()));
  t.teardown(() => pacer.stop());
  pacer.kick();
  pacer.kick();
  pacer.kick();
  t.equal(starts.length, 0, 'not during the turn that kicked');
  await endOfTurn();
  t.equal(starts.length, 1, 'one start for three kicks, with no wait for the interval');
});

t.test('kicks within the interval after a start share one start at its end', async (t) => {
  const { starts, pacer } = await startedPacer(t, 300);
  pacer.kick();
  await endOfTurn();
  pacer.kick();
  await new Promise((r) => setTimeout(r, 100));
  pacer.kick();
  t.equal(starts.length, 1, 'still one start 100 ms into the interval');
  await new Promise((r) => setTimeout(r, 400));
  t.equal(starts.length, 2, 'the three kicks made one start');
  // A little under 300 is the timers' own granularity; without pacing it would be under 1 ms.
  t.ok(
    starts[1]! - starts[0]! >= 290,
    `the second start came ${(starts[1]! - starts[0]!).toFixed(0)} ms after the first, not sooner than 300`,
  );
});

t.test('after a quiet spell longer than the interval, a kick starts at once again', async (t) => {
  const { starts, pacer } = await startedPacer(t, 50);
  await new Promise((r) => setTimeout(r, 80));
  pacer.kick();
  await endOfTurn();
  t.equal(starts.length, 2, 'started at the end of the turn that kicked');
});

t.test('stop cancels a start waiting for its interval', async (t) => {
  let starts = 0;
  const pacer = createPacer(100, () => starts++);
  pacer.kick();
  await endOfTurn();
  pacer.kick();
  pacer.stop();
  await new Promise((r) => setTimeout(r, 200));
  t.equal(starts, 1, 'the waiting start never ran');
});

t.test('an interval of 0 starts at the end of every turn that kicked', async (t) => {
  let starts = 0;
  const pacer = createPacer(0, () => starts++);
  for (let i = 0; i < 3; i++) {
    pacer.kick();
    pacer.kick();
    await endOfTurn();
  }
  t.equal(starts, 3);
});
