import t from 'tap';
import { startPlatform } from '../helpers/platform.ts';
import {
  awaitProcessed,
  conversion,
  createAffiliate,
  publishConversion,
  setMerchantSettings,
  startCommissions,
} from '../helpers/commissions.ts';

/**
 * The commissions service paces its batches of conversion.recorded (CONVERSION_BATCH_INTERVAL_MS): a conversion
 * after a quiet spell is processed at once, conversions arriving within the interval after a batch started are
 * processed together by one transaction at its end, at most CONVERSION_BATCH_MAX of them. Rows written by one
 * transaction share its xmin. The interval is long and the batches small here so that the test sees them; the
 * defaults are 50 ms and 128.
 */
const INTERVAL_MS = 1000;
const BATCH_MAX = 4;

const platform = await startPlatform(t);
await startCommissions(t, platform, {
  env: {
    CONVERSION_BATCH_INTERVAL_MS: String(INTERVAL_MS),
    CONVERSION_BATCH_MAX: String(BATCH_MAX),
    CONVERSION_CONCURRENCY: '1',
  },
});
const m = await platform.merchant();
await setMerchantSettings(platform.sql, m.id, ['default_rate=0.1']);
const affiliates: { id: string }[] = [];
for (let i = 0; i < 4; i++) affiliates.push(await createAffiliate(m.client, { email: `paced${i}@example.com` }));

/** The sizes of the transactions that processed these conversions (rows of one transaction share its xmin). */
const transactionSizesOf = async (eventIds: string[]) => {
  const rows = await platform.sql<{ n: number }[]>`
    select count(*)::int as n from processed_conversions
    where merchant_id = ${m.id} and event_id in ${platform.sql(eventIds)}
    group by xmin::text order by n desc`;
  return rows.map((r) => r.n);
};

t.test('conversions within the interval after a batch are processed together at its end', async (t) => {
  const first = conversion({ affiliate_id: affiliates[0]!.id });
  const quietStart = performance.now();
  await publishConversion(platform.nc, platform.prefix, m.id, first);
  await awaitProcessed(platform.sql, m.id, [first.event_id]);
  const firstSeen = performance.now();
  t.ok(
    firstSeen - quietStart < INTERVAL_MS,
    'the first conversion, after a quiet spell, did not wait for the interval',
  );

  // Published one by one, each acknowledged by JetStream before the next: without pacing each would be a batch.
  const later = affiliates.slice(1).map((a) => conversion({ affiliate_id: a.id }));
  for (const c of later) await publishConversion(platform.nc, platform.prefix, m.id, c);
  await awaitProcessed(
    platform.sql,
    m.id,
    later.map((c) => c.event_id),
  );
  const gap = performance.now() - firstSeen;
  t.same(await transactionSizesOf(later.map((c) => c.event_id)), [3], 'one transaction processed the three');
  t.ok(
    gap >= INTERVAL_MS / 2,
    `they were processed ${gap.toFixed(0)} ms after the first was seen, not sooner than the interval allows`,
  );

  const [commissions] = await platform.sql<
    { n: number }[]
  >`select count(*)::int as n from commissions where merchant_id = ${m.id}`;
  t.equal(commissions!.n, 4, 'one commission for each conversion');
});

t.test('a burst larger than CONVERSION_BATCH_MAX is split into transactions of at most that many', async (t) => {
  const burst = Array.from({ length: 9 }, (_, i) =>
    conversion({ affiliate_id: affiliates[i % affiliates.length]!.id }),
  );
  for (const c of burst) await publishConversion(platform.nc, platform.prefix, m.id, c);
  await awaitProcessed(
    platform.sql,
    m.id,
    burst.map((c) => c.event_id),
  );
  const sizes = await transactionSizesOf(burst.map((c) => c.event_id));
  t.equal(
    sizes.reduce((a, b) => a + b, 0),
    9,
    'every conversion of the burst was processed',
  );
  t.ok(sizes[0]! <= BATCH_MAX, `no transaction processed more than ${BATCH_MAX} (sizes ${sizes.join(', ')})`);
  t.ok(sizes.length >= 3, `the nine took at least three transactions (sizes ${sizes.join(', ')})`);

  const [commissions] = await platform.sql<
    { n: number }[]
  >`select count(*)::int as n from commissions where merchant_id = ${m.id}`;
  t.equal(commissions!.n, 13, 'one commission for each of the thirteen conversions');
});
