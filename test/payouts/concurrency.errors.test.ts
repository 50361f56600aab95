import t from 'tap';
import { affiliate, approvedCommissions, payoutMerchant, startPayoutsPlatform } from '../helpers/payouts.ts';

/**
 * 20 concurrent POST /api/v1/payouts over real HTTP, through the gateway to the commissions service: every
 * commission ends in exactly one payout, whatever order the requests run in.
 */

const { platform, service } = await startPayoutsPlatform(t, { env: { DATABASE_POOL_SIZE: '10' } });

t.test('20 concurrent POST /api/v1/payouts never put one commission in two payouts', async (t) => {
  const m = await payoutMerchant(platform, ['tax_form_policy=none', 'min_payout="1"']);
  const expected = new Map<string, string[]>();
  for (let i = 0; i < 6; i++) {
    const a = await affiliate(m, `aff${i}@example.com`);
    const usd = await approvedCommissions(platform, service, m.id, a.id, [
      { amount: '100.00' },
      { amount: '55.55' },
      { amount: '12.34' },
    ]);
    const eur = await approvedCommissions(platform, service, m.id, a.id, [{ amount: '70.00', currency: 'EUR' }]);
    expected.set(`${a.id} USD`, usd);
    expected.set(`${a.id} EUR`, eur);
  }

  const answers = await Promise.all(Array.from({ length: 20 }, () => m.client.post('/api/v1/payouts', {})));
  t.same(
    answers.map((a) => a.status),
    Array(20).fill(201),
    'every request answered 201',
  );
  const created = answers.flatMap(
    (a) => a.body.data as { id: string; affiliate_id: string; currency: string; commission_ids: string[] }[],
  );
  t.equal(created.length, expected.size, 'one payout per affiliate and currency, across all answers');
  const seen = new Map<string, string>();
  for (const p of created) {
    for (const id of p.commission_ids) {
      t.notOk(seen.has(id), `commission ${id} in one payout only`);
      seen.set(id, p.id);
    }
    t.same([...p.commission_ids].sort(), [...expected.get(`${p.affiliate_id} ${p.currency}`)!].sort());
  }
  const [links] = await platform.sql<{ n: number; distinct_commissions: number }[]>`
    select count(*)::int as n, count(distinct commission_id)::int as distinct_commissions
    from payout_commissions where merchant_id = ${m.id}`;
  t.same(links, { n: 24, distinct_commissions: 24 }, 'the database holds each commission once');
  const [payouts] = await platform.sql<
    { n: number }[]
  >`select count(*)::int as n from payouts where merchant_id = ${m.id}`;
  t.equal(payouts!.n, 12);
});

t.test('a void racing a move: never a 500, and the payout sums exactly the commissions it holds', async (t) => {
  const m = await payoutMerchant(platform, ['tax_form_policy=none', 'min_payout="1"']);
  for (let round = 0; round < 8; round++) {
    const a = await affiliate(m, `race${round}@example.com`);
    const [first, second] = await approvedCommissions(platform, service, m.id, a.id, [
      { amount: '100.00' },
      { amount: '23.45' },
    ]);
    const [payout] = (await m.client.post('/api/v1/payouts', { affiliate_ids: [a.id] })).body.data;
    const [move, voiding] = await Promise.all([
      m.client.patch(`/api/v1/payouts/${payout.id}`, { status: 'sent' }),
      m.client.patch(`/api/v1/commissions/${first}`, { status: 'voided' }),
    ]);
    t.equal(move.status, 200, `round ${round}: the move`);
    t.equal(voiding.status, 200, `round ${round}: the void answered ${voiding.status}`);
    const after = (await m.client.get(`/api/v1/payouts/${payout.id}`)).body;
    t.same(after.commission_ids, [first, second].sort(), `round ${round}: the payout keeps its history`);
    const held = await platform.sql<{ id: string; amount: string; status: string; requested: boolean }[]>`
      select id, amount::text, status, void_requested_at is not null as requested from commissions
      where id in ${platform.sql(after.commission_ids as string[])}`;
    const counted = held.filter((c) => c.status === 'approved');
    t.equal(
      after.amount,
      counted.reduce((sum, c) => sum + Number(c.amount), 0),
      `round ${round}: the amount is the sum of the commissions it still carries`,
    );
    const firstRow = held.find((c) => c.id === first)!;
    if (firstRow.status === 'voided') t.equal(counted.length, 1, `round ${round}: voided first, then sent`);
    else t.ok(firstRow.requested, `round ${round}: sent first, the void recorded`);
  }
});
