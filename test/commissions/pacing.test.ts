import t from 'tap';
import { startPlatform } from '../helpers/platform.ts';
import { awaitProcessed, conversion, createAffiliate, publishConversion, setMerchantSettings, startCommissions } from '../helpers/commissions.ts';

/**
 * The commissions service paces its batches of conversion.recorded (CONVERSION_BATCH_INTERVAL_MS): a conversion
 * after a quiet spell is processed at once, conversions arriving within the interval after a batch started are
 * processed together by one transaction at its end. Rows written by one transaction share its xmin. The interval is
 * long here so that the test sees it; the default is 20 ms.
 */
const INTERVAL_MS = 1000;

const platform = await startPlatform(t);
await startCommissions(t, platform, { env: { CONVERSION_BATCH_INTERVAL_MS: String(INTERVAL_MS) } });
const m = await platform.merchant();
await setMerchantSettings(platform.sql, m.id, ['default_rate=0.1']);
const affiliates: { id: string }[] = [];
for (let i = 0; i < 4; i++) affiliates.push(await createAffiliate(m.client, { email: `paced${i}@example.com` }));

const transactionsOf = async (eventIds: string[]) => {
  const rows = await platform.sql<{ xid: string }[]>`
    select distinct xmin::text as xid from processed_conversions where merchant_id = ${m.id} and event_id in ${platform.sql(eventIds)}`;
  return rows.length;
};

t.test('conversions within the interval after a batch are processed together at its end', async (t) => {
  const first = conversion({ affiliate_id: affiliates[0]!.id });
  const quietStart = performance.now();
  await publishConversion(platform.nc, platform.prefix, m.id, first);
  await awaitProcessed(platform.sql, m.id, [first.event_id]);
  const firstSeen = performance.now();
  t.ok(firstSeen - quietStart < INTERVAL_MS, 'the first conversion, after a quiet spell, did not wait for the interval');

  // Published one by one, each acknowledged by JetStream before the next: without pacing each would be a batch.
  const later = affiliates.slice(1).map((a) => conversion({ affiliate_id: a.id }));
  for (const c of later) await publishConversion(platform.nc, platform.prefix, m.id, c);
  await awaitProcessed(
    platform.sql,
    m.id,
    later.map((c) => c.event_id),
  );
  const gap = performance.now() - firstSeen;
  t.equal(await transactionsOf(later.map((c) => c.event_id)), 1, 'one transaction processed the three');
  t.ok(gap >= INTERVAL_MS / 2, `they were processed ${gap.toFixed(0)} ms after the first was seen, not sooner than the interval allows`);

  const [commissions] = await platform.sql<{ n: number }[]>`select count(*)::int as n from commissions where merchant_id = ${m.id}`;
  t.equal(commissions!.n, 4, 'one commission for each conversion');
});
