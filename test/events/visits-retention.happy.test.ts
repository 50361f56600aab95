import t from 'tap';
import { newId } from '@platform/shared/ids';
import { loadEventsConfig } from '@platform/events/config';
import { startEventsService } from '@platform/events/service';
import { captureLogger, eventually, startPlatform } from '../helpers/platform.ts';
import { createAffiliate } from './setup.ts';

// Visits older than VISIT_RETENTION_DAYS are deleted by the events service: at start, then hourly.

const platform = await startPlatform(t);
const { sql } = platform;
const merchant = await platform.merchant();
const other = await platform.merchant();
const jane = await createAffiliate(merchant.client, 'jane@example.com', { slug: 'jane' });
const max = await createAffiliate(other.client, 'max@example.com', { slug: 'max' });

async function visitAgedDays(merchantId: string, affiliateId: string, days: number): Promise<string> {
  const id = newId('vis');
  await sql`
    insert into visits (id, merchant_id, affiliate_id, created_at, expires_at)
    values (${id}, ${merchantId}, ${affiliateId}, now() - make_interval(days => ${days}), now() - make_interval(days => ${days}) + interval '60 days')`;
  return id;
}

t.test('visits past the retention are deleted, of every merchant; younger ones stay', async (t) => {
  const expired = [await visitAgedDays(merchant.id, jane.id, 401), await visitAgedDays(other.id, max.id, 500)];
  const kept = [
    await visitAgedDays(merchant.id, jane.id, 399),
    await visitAgedDays(merchant.id, jane.id, 0),
    await visitAgedDays(other.id, max.id, 366),
  ];
  const captured = captureLogger('events');
  const events = await startEventsService(
    loadEventsConfig({ ...platform.env, VISIT_RETENTION_DAYS: '400' }),
    captured.log,
  );
  t.teardown(() => events.close());

  const remaining = await eventually(
    async () => {
      const rows = await sql<{ id: string }[]>`select id from visits where id in ${sql([...expired, ...kept])}`;
      return rows.length === kept.length ? rows.map((r) => r.id) : undefined;
    },
    10_000,
    'the purge at start',
  );
  t.same(remaining.sort(), [...kept].sort());
  t.ok(
    captured.lines.some((l) => /visits past the retention deleted/.test(l) && /"count":2/.test(l)),
    'the purge is logged with its count',
  );
});

t.test('the retention must outlast the longest attribution window (365 days)', async (t) => {
  t.throws(() => loadEventsConfig({ ...platform.env, VISIT_RETENTION_DAYS: '365' }), /VISIT_RETENTION_DAYS/);
  t.equal(loadEventsConfig({ ...platform.env }).VISIT_RETENTION_DAYS, 400, 'default 400 days');
});
