import t from 'tap';
import { releaseAttempt, reserveAttempt } from '@platform/gateway/http/accounts/queries';
import { createTestDatabase } from '../helpers/platform.ts';

/**
 * A password attempt's reservation and its release when it guessed nothing (refused as busy, the check failed), with
 * attempts at once: a reservation whose transaction began before another opened the window it counts in is still
 * released from that window. (Stamped with its transaction's start, it seemed older than the window and kept its
 * charge: an address charged for sign-ins refused as busy.)
 */
const { sql } = await createTestDatabase(t);
const WINDOW_SECONDS = 900;
const count = async (subject: string) =>
  (await sql<{ count: number }[]>`select count from dashboard_signin_failures where subject = ${subject}`)[0]?.count;

t.test('a reservation begun before the window opened is released from it', async (t) => {
  const ip = 'ip:192.0.2.7';
  const early = await sql.reserve();
  try {
    // The early attempt's transaction begins first; another attempt then opens the address's window and commits.
    await early`begin`;
    await early`select now()`;
    const first = await reserveAttempt(sql, ['account:a@example.com', ip], [5, 20], WINDOW_SECONDS);
    t.equal(first.wait, 0, 'the first attempt is counted');
    const late = await reserveAttempt(early, ['account:b@example.com', ip], [5, 20], WINDOW_SECONDS);
    await early`commit`;
    t.equal(late.wait, 0, 'the early-begun attempt is counted too');
    t.equal(await count(ip), 2, 'the address holds both');

    await releaseAttempt(sql, ['account:b@example.com', ip], late.at);
    t.equal(await count(ip), 1, 'its release takes its charge off the address');
    t.equal(await count('account:b@example.com'), 0, 'and off its account');
  } finally {
    await early`rollback`.catch(() => {});
    early.release();
  }
});

t.test('a window that starts again after a reservation does not give it back', async (t) => {
  const subject = 'ip:192.0.2.8';
  const old = await reserveAttempt(sql, [subject], [20], WINDOW_SECONDS);
  // The window ends and a new attempt opens the next one.
  await sql`update dashboard_signin_failures set window_start = window_start - interval '1 hour' where subject = ${subject}`;
  const next = await reserveAttempt(sql, [subject], [20], WINDOW_SECONDS);
  t.equal(next.wait, 0);
  t.equal(await count(subject), 1, 'the new window counts the new attempt only');
  await releaseAttempt(sql, [subject], old.at);
  t.equal(await count(subject), 1, "the old reservation's release leaves the new window alone");
  await releaseAttempt(sql, [subject], next.at);
  t.equal(await count(subject), 0, "the new one's release takes it off");
});

t.test('a full window refuses and says when to come back', async (t) => {
  const subject = 'ip:192.0.2.9';
  for (let i = 0; i < 3; i++) t.equal((await reserveAttempt(sql, [subject], [3], WINDOW_SECONDS)).wait, 0);
  const refused = await reserveAttempt(sql, [subject], [3], WINDOW_SECONDS);
  t.ok(refused.wait > 0 && refused.wait <= WINDOW_SECONDS, `wait ${refused.wait} s`);
  t.equal(await count(subject), 3, 'a refused attempt is not counted');
});
