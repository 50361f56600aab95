import t from 'tap';
import { affiliate, approvedCommissions, payoutMerchant, startPayoutsPlatform } from '../helpers/payouts.ts';

/**
 * A payout run that Postgres rolls back to let a concurrent transaction through (a deadlock's victim, 40P01) answers
 * 503 with Retry-After and keeps nothing; the Idempotency-Key is given back (a 5xx is not stored), so the retry does
 * the work once, and later retries with the key replay it. The deadlock is raised by a trigger on the run's last
 * write (its commissions' links, after the payout row): a real server's error, at the point where it hurts most.
 */
const { platform, service, logs } = await startPayoutsPlatform(t);
const withKey = (key: string) => ({ headers: { 'idempotency-key': key } });

await platform.sql`create table deadlock_armed (armed boolean not null)`;
await platform.sql`insert into deadlock_armed values (true)`;
await platform.sql`
  create function raise_deadlock() returns trigger language plpgsql as $$
  begin
    if (select armed from deadlock_armed) then
      raise exception 'deadlock detected' using errcode = '40P01';
    end if;
    return null;
  end $$`;
await platform.sql`
  create trigger payout_links_deadlock after insert on payout_commissions
  for each statement execute function raise_deadlock()`;

t.test('rolled back half-way: 503, nothing kept; the retry pays once, and again replays', async (t) => {
  const m = await payoutMerchant(platform, ['tax_form_policy=none', 'min_payout="1"']);
  const a = await affiliate(m, 'victim@example.com');
  const commissionIds = await approvedCommissions(platform, service, m.id, a.id, [
    { amount: '100.00' },
    { amount: '55.55' },
  ]);
  const kept = async () => {
    const [row] = await platform.sql<{ payouts: number; links: number }[]>`
      select
        (select count(*)::int from payouts where merchant_id = ${m.id}) as payouts,
        (select count(*)::int from payout_commissions where merchant_id = ${m.id}) as links`;
    return row!;
  };

  const failed = await m.client.post('/api/v1/payouts', {}, withKey('run-1'));
  t.equal(failed.status, 503, 'the victim answers 503');
  t.equal(failed.body.error.code, 'UNAVAILABLE');
  t.ok(failed.headers.get('retry-after'), 'with Retry-After');
  t.same(await kept(), { payouts: 0, links: 0 }, 'nothing kept: no payout row without its links');
  t.ok(
    logs.some((line) => line.includes('rolled back for a concurrent transaction')),
    'logged as the lock-order error it usually is',
  );

  await platform.sql`update deadlock_armed set armed = false`;
  // Retried twice at once with the same key: one does the work, the other waits for it and replays it.
  const retries = await Promise.all([1, 2].map(() => m.client.post('/api/v1/payouts', {}, withKey('run-1'))));
  t.same(
    retries.map((r) => r.status),
    [201, 201],
    'both retries answer 201',
  );
  const [payout] = retries[0]!.body.data as { id: string; amount: number; commission_ids: string[] }[];
  t.same(retries[1]!.body, retries[0]!.body, 'with the same payout');
  t.same(
    retries.map((r) => r.headers.get('idempotent-replayed')).sort(),
    ['true', null].sort(),
    'one did the work, the other replayed it',
  );
  t.equal(payout!.amount, 15.56, 'a tenth of both conversions');
  t.same([...payout!.commission_ids].sort(), [...commissionIds].sort());

  const later = await m.client.post('/api/v1/payouts', {}, withKey('run-1'));
  t.equal(later.headers.get('idempotent-replayed'), 'true', 'a later retry replays');
  t.same(later.body, retries[0]!.body);
  t.same(await kept(), { payouts: 1, links: 2 }, 'one payout, with both commissions');
});
