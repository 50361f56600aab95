import t from 'tap';
import { drainAnalyticsPending } from '@platform/events/queries/analytics-pending';
import { startCommissions } from '../helpers/commissions.ts';
import { eventually } from '../helpers/platform.ts';
import { clickReferralLink, createAffiliate, createCoupon, setSettings, startWithEvents } from '../events/setup.ts';
import { insertClick, insertEvent, rolledUp } from './setup.ts';

/**
 * After a burst of clicks and events, with repeated requests, refunds that void commissions, late (back-dated)
 * events and a second drain racing the service's, the rollups hold exactly what the raw tables say.
 */
const { platform } = await startWithEvents(t);
await startCommissions(t, platform);
const { sql, baseUrl } = platform;
const m = await platform.merchant({ plan: 'scale', rateLimit: 60000 });
await setSettings(sql, m.id, { default_rate: 0.1, currency: 'USD', landing_url: 'https://shop.example.com/p?x=1' });
const affiliates: { id: string; slug: string }[] = [];
for (const name of ['ann', 'bob', 'cat']) affiliates.push(await createAffiliate(m.client, `${name}@example.com`));
await createCoupon(m.client, affiliates[1]!.id, 'BOB');

/**
 * Ranges ending at `now` over the four UTC days the dimension tests write: whole days with partial ends, a day and a
 * bit, and hours within a day.
 */
function rangesUntil(now: number): [number, number][] {
  const hour = 3_600_000;
  return [
    [now - 80 * hour - 7 * 60_000, now],
    [now - 49 * hour, now - 24 * hour + 11 * 60_000],
    [now - 6 * hour, now - hour],
  ];
}

t.test('the rollups equal the raw tables after a burst', async (t) => {
  // A second drain racing the service's: the advisory lock and DELETE … RETURNING keep either from counting twice.
  let racing = true;
  const racer = (async () => {
    while (racing) await drainAnalyticsPending(sql, 7);
  })();

  const visits: string[] = [];
  await Promise.all(
    Array.from({ length: 30 }, async (_, i) => {
      const a = affiliates[i % 3]!;
      visits.push(await clickReferralLink(baseUrl, m.id, a.slug, { cookie: '' }));
      await insertClick(sql, m.id, {
        affiliateId: a.id,
        country: i % 2 ? 'FR' : 'US',
        device: i % 5 ? 'mobile' : 'bot',
      });
    }),
  );
  const post = (body: Record<string, unknown>) => m.client.post('/api/v1/events', body);
  const sends: Promise<{ status: number }>[] = [];
  for (let i = 0; i < 40; i++) {
    const body =
      i % 4 === 0
        ? {
            event_type: 'purchase',
            external_id: `o${i}`,
            coupon: 'BOB',
            amount: 12.34,
            currency: i % 8 ? 'USD' : 'EUR',
          }
        : { event_type: 'purchase', external_id: `o${i}`, cookie_id: visits[i % visits.length], amount: 10 + i };
    sends.push(post(body), post(body)); // each sent twice, at once: one event stored
    if (i % 3 === 0)
      sends.push(post({ event_type: 'signup', external_id: `s${i}`, cookie_id: visits[i % visits.length] }));
  }
  const statuses = await Promise.all(sends);
  t.ok(
    statuses.every((r) => r.status === 201 || r.status === 200),
    'every request recorded or answered from its twin',
  );
  // Late events: recorded with times months back (an import), and one the drain meets after their bucket passed.
  for (const [i, at] of ['2026-06-01T10:07:00Z', '2026-06-01T10:14:59Z', '2026-08-15T23:59:00Z'].entries())
    await insertEvent(sql, m.id, { at: new Date(at), affiliateId: affiliates[i]!.id, amount: '5.55' });

  await eventually(async () => {
    const [row] = await sql<{ n: number }[]>`select count(*)::int as n from commissions where merchant_id = ${m.id}`;
    return row!.n >= 30 ? true : undefined;
  });
  // Refunds void their orders' commissions and subtract their amounts.
  for (const i of [1, 2, 4]) {
    const refund = await post({ event_type: 'refund', external_id: `o${i}`, amount: 3 });
    t.equal(refund.status, 201, `refund of o${i}`);
  }
  await eventually(async () => {
    const [row] = await sql<{ n: number }[]>`
      select count(*)::int as n from commissions where merchant_id = ${m.id} and status = 'voided'`;
    return row!.n === 3 ? true : undefined;
  });
  racing = false;
  await racer;
  await rolledUp(sql);

  const [series] = await sql<{ missing: number; extra: number }[]>`
    with raw as (
      select bucket, currency, sum(clicks) as clicks, sum(bot_clicks) as bot_clicks, sum(conversions) as conversions,
             sum(revenue) as revenue, sum(commissions) as commissions
      from (
        select date_bin('15 minutes', created_at, timestamptz '2000-01-01Z') as bucket, '' as currency,
               (device is distinct from 'bot')::int as clicks, (device = 'bot')::int as bot_clicks,
               0 as conversions, 0 as revenue, 0 as commissions
        from visits where merchant_id = ${m.id}
        union all
        select date_bin('15 minutes', created_at, timestamptz '2000-01-01Z'), currency, 0, 0,
               (event_type <> 'refund')::int, case when event_type = 'refund' then -amount else amount end, 0
        from conversion_events where merchant_id = ${m.id}
        union all
        select date_bin('15 minutes', created_at, timestamptz '2000-01-01Z'), currency, 0, 0, 0, 0, amount
        from commissions where merchant_id = ${m.id} and status <> 'voided'
      ) f group by 1, 2
    ), rolled as (
      select bucket, currency, clicks, bot_clicks, conversions, revenue, commissions
      from analytics_series where merchant_id = ${m.id}
    )
    select (select count(*) from (select * from raw except select * from rolled) x)::int as missing,
           (select count(*) from (select * from rolled except select * from raw) x)::int as extra`;
  t.strictSame(series, { missing: 0, extra: 0 }, 'every bucket and currency of the series equals the raw sums');

  const [byAffiliate] = await sql<{ differ: number }[]>`
    with raw as (
      select coalesce(affiliate_id, '') as affiliate_id, event_type, currency, count(*) filter (where event_type <> 'refund') as conversions,
             sum(case when event_type = 'refund' then -amount else amount end) as revenue
      from conversion_events where merchant_id = ${m.id} group by 1, 2, 3
    ), rolled as (
      select affiliate_id, event_type, currency, sum(conversions) as conversions, sum(revenue) as revenue
      from analytics_conversions where merchant_id = ${m.id} group by 1, 2, 3
      having sum(conversions) <> 0 or sum(revenue) <> 0
    ), raw_commissions as (
      select affiliate_id, currency, sum(amount) as commissions from commissions
      where merchant_id = ${m.id} and status <> 'voided' group by 1, 2
    ), rolled_commissions as (
      select affiliate_id, currency, sum(commissions) as commissions from analytics_conversions
      where merchant_id = ${m.id} group by 1, 2 having sum(commissions) <> 0
    ), raw_clicks as (
      select affiliate_id, coalesce(country, '') as country, count(*) filter (where device is distinct from 'bot') as clicks
      from visits where merchant_id = ${m.id} group by 1, 2
    ), rolled_clicks as (
      select affiliate_id, country, sum(clicks) as clicks from analytics_clicks where merchant_id = ${m.id} group by 1, 2
    )
    select ((select count(*) from (select * from raw except select * from rolled) a)
          + (select count(*) from (select * from rolled except select * from raw) b)
          + (select count(*) from (select * from raw_commissions except select * from rolled_commissions) c)
          + (select count(*) from (select * from rolled_commissions except select * from raw_commissions) d)
          + (select count(*) from (select * from raw_clicks except select * from rolled_clicks) e)
          + (select count(*) from (select * from rolled_clicks except select * from raw_clicks) f))::int as differ`;
  t.equal(byAffiliate!.differ, 0, 'per affiliate, event type, currency and country too');

  const [raw] = await sql<{ clicks: number; conversions: number }[]>`
    select (select count(*) from visits where merchant_id = ${m.id} and device is distinct from 'bot')::int as clicks,
           (select count(*) from conversion_events where merchant_id = ${m.id} and event_type <> 'refund')::int as conversions`;
  const answer = await m.client.get('/api/v1/analytics?start=2026-01-01T00:00:00Z&group_by=month');
  t.equal(answer.status, 200);
  const sum = (k: 'clicks' | 'conversions') =>
    answer.body.data.reduce((n: number, d: Record<string, number>) => n + d[k]!, 0);
  t.equal(sum('clicks'), raw!.clicks, 'the API counts every click once');
  t.equal(sum('conversions'), raw!.conversions, 'and every conversion once, duplicates and refunds aside');
  t.equal(raw!.conversions, 40 + 14 + 3, 'the repeated requests stored one event each');
});

t.test('click dimensions: their rollups equal the raw clicks, and so does their answer over any range', async (t) => {
  const now = Date.now();
  const hour = 3_600_000;
  // Clicks over four UTC days, bots among them: a range of several days reads whole days from the daily rollup and
  // its ends from the 15-minute one.
  for (const [i, ago] of [0, 5, 23, 26, 47, 50, 71, 75].entries())
    await insertClick(sql, m.id, {
      affiliateId: affiliates[i % 3]!.id,
      at: new Date(now - ago * hour),
      country: i % 3 ? 'DE' : null,
      referrerHost: i % 2 ? 'news.example.org' : null,
      landingUrl: `https://shop.example.com/p${i % 2}?ref=${i}#top`,
      device: i % 4 === 3 ? 'bot' : 'tablet',
    });
  await rolledUp(sql);

  const [rollups] = await sql<{ differ: number }[]>`
    with raw as (
      select d.dimension, date_bin('15 minutes', v.created_at, timestamptz '2000-01-01Z') as bucket, d.key,
             count(*) as clicks
      from visits v
      cross join lateral (values ('country', coalesce(v.country, '')), ('referrer', coalesce(v.referrer_host, '')),
                                 ('landing_page', coalesce(split_part(split_part(v.landing_url, '#', 1), '?', 1), '')),
                                 ('device', coalesce(v.device, ''))) d (dimension, key)
      where v.merchant_id = ${m.id} and v.device is distinct from 'bot'
      group by 1, 2, 3
    ), raw_daily as (
      select dimension, date_bin('1 day', bucket, timestamptz '2000-01-01Z') as day, key, sum(clicks) as clicks
      from raw group by 1, 2, 3
    ), rolled_daily as (
      select dimension, day, key, clicks from analytics_click_dimensions_daily where merchant_id = ${m.id}
    )
    select ((select count(*) from (select * from raw_daily except select * from rolled_daily) c)
          + (select count(*) from (select * from rolled_daily except select * from raw_daily) d))::int as differ`;
  t.equal(rollups!.differ, 0, 'per dimension, value and UTC day');

  for (const [from, to] of rangesUntil(now))
    for (const dimension of ['country', 'referrer', 'landing_page', 'device']) {
      const q = `start=${new Date(from).toISOString()}&end=${new Date(to).toISOString()}`;
      const res = await m.client.get(`/api/v1/analytics?${q}&group_by=${dimension}&limit=100`);
      t.equal(res.status, 200);
      const raw = await sql<{ key: string | null; clicks: number }[]>`
        select nullif(case ${dimension} when 'country' then coalesce(country, '')
                                         when 'referrer' then coalesce(referrer_host, '')
                                         when 'landing_page' then split_part(split_part(landing_url, '#', 1), '?', 1)
                                         else coalesce(device, '') end, '') as key,
               count(*)::int as clicks
        from visits
        where merchant_id = ${m.id} and device is distinct from 'bot'
          and created_at >= ${res.body.start} and created_at < ${res.body.end}
        group by 1`;
      const sorted = (rows: { key: string | null; clicks: number }[]) =>
        rows.map((r) => `${r.key ?? '(none)'}: ${r.clicks}`).sort();
      const answered = (res.body.data as { key: string | null; clicks: number }[]).filter((d) => d.clicks > 0);
      t.strictSame(sorted(answered), sorted(raw), `${dimension} clicks, ${q}`);
    }
});

t.test('conversion dimensions: their rollup equals analytics_conversions, and so does their answer', async (t) => {
  const now = Date.now();
  const hour = 3_600_000;
  // Events over four UTC days, in two currencies, one with a coupon and one a refund: a range of several days reads
  // whole days from the daily rollup and its ends from analytics_conversions.
  for (const [i, ago] of [1, 4, 22, 27, 46, 52, 70, 77].entries())
    await insertEvent(sql, m.id, {
      at: new Date(now - ago * hour),
      affiliateId: affiliates[i % 3]!.id,
      eventType: i === 5 ? 'refund' : i % 2 ? 'purchase' : 'signup',
      amount: `${i + 1}.25`,
      currency: i % 3 ? 'USD' : 'EUR',
      ...(i % 4 === 1 ? { coupon: 'BOB' } : {}),
    });
  await rolledUp(sql);

  const [rollup] = await sql<{ differ: number }[]>`
    with raw as (
      select d.dimension, date_bin('1 day', c.bucket, timestamptz '2000-01-01Z') as day, d.key, c.currency,
             sum(c.conversions) as conversions, sum(c.revenue) as revenue, sum(c.commissions) as commissions,
             count(*) filter (where c.commissions <> 0) as commissioned
      from analytics_conversions c
      cross join lateral (values ('coupon', c.coupon), ('event_type', c.event_type), ('country', c.country),
                                 ('referrer', c.referrer), ('landing_page', c.landing_page), ('device', c.device))
        d (dimension, key)
      where c.merchant_id = ${m.id}
      group by 1, 2, 3, 4
      having sum(c.conversions) <> 0 or sum(c.revenue) <> 0 or sum(c.commissions) <> 0
          or count(*) filter (where c.commissions <> 0) <> 0
    ), rolled as (
      select dimension, day, key, currency, conversions, revenue, commissions, commissioned
      from analytics_conversion_dimensions_daily where merchant_id = ${m.id}
        and (conversions <> 0 or revenue <> 0 or commissions <> 0 or commissioned <> 0)
    )
    select ((select count(*) from (select * from raw except select * from rolled) a)
          + (select count(*) from (select * from rolled except select * from raw) b))::int as differ`;
  t.equal(rollup!.differ, 0, 'per dimension, value, currency and UTC day');

  for (const [from, to] of rangesUntil(now))
    for (const dimension of ['coupon', 'event_type', 'country', 'referrer', 'landing_page', 'device']) {
      const q = `start=${new Date(from).toISOString()}&end=${new Date(to).toISOString()}`;
      const res = await m.client.get(`/api/v1/analytics?${q}&group_by=${dimension}&currency=USD&limit=100`);
      t.equal(res.status, 200);
      const raw = await sql<{ key: string | null; conversions: number; revenue: string; commissions: string }[]>`
        select nullif(case ${dimension} when 'coupon' then coupon when 'event_type' then event_type
                                        when 'country' then country when 'referrer' then referrer
                                        when 'landing_page' then landing_page else device end, '') as key,
               sum(conversions)::int as conversions,
               coalesce(sum(revenue) filter (where currency = 'USD'), 0)::text as revenue,
               coalesce(sum(commissions) filter (where currency = 'USD'), 0)::text as commissions
        from analytics_conversions
        where merchant_id = ${m.id} and bucket >= ${res.body.start} and bucket < ${res.body.end}
        group by 1 having sum(conversions) <> 0`;
      const lines = (rows: { key: string | null; conversions: number; revenue: string; commissions: string }[]) =>
        rows
          .filter((r) => r.conversions !== 0)
          .map((r) => `${r.key ?? '(none)'}: ${r.conversions} ${Number(r.revenue)} ${Number(r.commissions)}`)
          .sort();
      t.strictSame(lines(res.body.data), lines(raw), `${dimension} conversions, revenue and commissions, ${q}`);
    }

  // A value with commissions but no conversion ranks as it does from the raw rows, even when its commissions cancel
  // out within a UTC day (a commission and its reversal), which that day's sums alone would hide. The day is two
  // before today's, whole inside the first range.
  const day = (Math.floor(now / 86_400_000) - 2) * 86_400_000;
  for (const [at, amount] of [
    [day + hour, '5.00'],
    [day + 5 * hour, '-5.00'],
  ] as const)
    await sql`
      insert into analytics_conversions (merchant_id, bucket, affiliate_id, coupon, event_type, country, referrer,
                                         landing_page, device, currency, conversions, revenue, commissions)
      values (${m.id}, ${new Date(at)}, ${affiliates[0]!.id}, 'NETZERO', 'purchase', '', '', '', '', 'USD', 0, 0,
              ${amount})`;
  const [from, to] = rangesUntil(now)[0]!;
  const ranked = await m.client.get(
    `/api/v1/analytics?start=${new Date(from).toISOString()}&end=${new Date(to).toISOString()}&group_by=coupon&limit=100`,
  );
  t.ok(
    (ranked.body.data as { key: string | null }[]).some((d) => d.key === 'NETZERO'),
    'a coupon whose commissions cancel out within a day is ranked',
  );
});

t.test("a commission's moves are counted once: rolled back, raced, repeated and undone", async (t) => {
  const totals = async () => {
    await rolledUp(sql);
    const [row] = await sql<{ raw: string; rolled: string }[]>`
      select (select coalesce(sum(amount), 0) from commissions
              where merchant_id = ${m.id} and status <> 'voided')::text as raw,
             (select coalesce(sum(commissions), 0) from analytics_series where merchant_id = ${m.id})::text as rolled`;
    return row!;
  };
  const [target] = await sql<{ id: string; amount: string }[]>`
    select id, amount::text from commissions where merchant_id = ${m.id} and status = 'pending' limit 1`;
  t.ok(target, 'a pending commission to move');
  const before = await totals();
  t.equal(Number(before.rolled), Number(before.raw), 'the rollup starts equal to the raw sum');

  // Half-way: a void whose transaction rolls back (a crash, a timeout before commit) appends nothing.
  await t.rejects(
    sql.begin(async (tx) => {
      await tx`update commissions set status = 'voided', voided_at = now(), void_reason = 'refund' where id = ${target!.id}`;
      throw new Error('gone before the commit');
    }),
  );
  t.same(await totals(), before, 'a rolled-back void changes nothing');

  // Raced and twice: two voids of one commission at once, then a third; it is taken off once.
  const voidIt = () => sql`update commissions set status = 'voided', voided_at = now(), void_reason = 'refund'
        where id = ${target!.id} and status <> 'voided'`;
  await Promise.all([voidIt(), voidIt()]);
  await voidIt();
  const voided = await totals();
  t.equal(voided.rolled, voided.raw, 'after racing and repeated voids the rollup equals the raw sum');
  const [taken] = await sql<{ exact: boolean }[]>`
    select (${before.rolled}::numeric - ${voided.rolled}::numeric) = ${target!.amount}::numeric as exact`;
  t.ok(taken!.exact, 'taken off exactly once');

  // Undone: the void reversed puts it back once; a move between live statuses changes no sum.
  await sql`update commissions set status = 'pending', voided_at = null, void_reason = null where id = ${target!.id}`;
  await sql`update commissions set status = 'approved' where id = ${target!.id}`;
  t.same(await totals(), before, 'un-voided and approved: back to where it started');
});

t.test('click dimensions: a drain stopped half-way counts nothing, the next counts once', async (t) => {
  await rolledUp(sql);
  const daily = async (q: typeof sql = sql) =>
    Number(
      (
        await q<{ clicks: string }[]>`
          select coalesce(sum(clicks), 0)::text as clicks from analytics_click_dimensions_daily
          where merchant_id = ${m.id} and dimension = 'country' and key = 'FR'`
      )[0]!.clicks,
    );
  const before = await daily();
  // The drain's write into analytics_clicks, in a transaction that then fails: the trigger's rows go with it.
  const inside = await sql
    .begin(async (tx) => {
      await tx`
        insert into analytics_clicks as c (merchant_id, bucket, affiliate_id, country, referrer, landing_page, device,
                                           clicks)
        values (${m.id}, date_bin('15 minutes', now(), timestamptz '2000-01-01Z'), ${affiliates[0]!.id}, 'FR', '',
                '', 'desktop', 1)
        on conflict (merchant_id, bucket, affiliate_id, country, referrer, landing_page, device)
        do update set clicks = c.clicks + excluded.clicks`;
      throw new Error(String(await daily(tx as unknown as typeof sql)));
    })
    .catch((err: Error) => Number(err.message));
  t.equal(inside, before + 1, 'counted inside the drain transaction');
  t.equal(await daily(), before, 'nothing counted once it rolled back');
  await insertClick(sql, m.id, { affiliateId: affiliates[0]!.id, at: new Date(), country: 'FR' });
  await rolledUp(sql);
  t.equal(await daily(), before + 1, 'the next drain counts the click once');
});
