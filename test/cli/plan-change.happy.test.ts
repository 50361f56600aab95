import t from 'tap';
import { runAdmin } from '../helpers/cli.ts';
import { createKey, createMerchant } from '../../scripts/admin/commands.ts';
import { startPlatform } from '../helpers/platform.ts';

// Custom per-key rate limits come with the scale plan: a merchant moved below it has its keys back at 600/min, each
// change in the key's audit log; moved between plans that keep them, nothing changes.
t.setTimeout(120_000);
const platform = await startPlatform(t);
const admin = (...args: string[]) => runAdmin(platform.databaseUrl, ...args);

t.test('set-plan below scale resets custom rate limits, audited; the gateway applies 600 at once', async (t) => {
  const merchant = await createMerchant(platform.sql, 'Rates Co', 'scale');
  const custom = await createKey(platform.sql, merchant!['id'], 'read', 1200);
  const plain = await createKey(platform.sql, merchant!['id'], 'read');
  const revoked = await createKey(platform.sql, merchant!['id'], 'read', 90);
  t.equal((await admin('key', 'revoke', revoked.id)).code, 0);

  const kept = await admin('merchant', 'set-plan', merchant!['id'], 'enterprise');
  t.equal(kept.code, 0, kept.stderr);
  t.same(
    await limits(merchant!['id']),
    { [custom.id]: 1200, [plain.id]: 600, [revoked.id]: 90 },
    'enterprise keeps custom limits',
  );

  const moved = await admin('merchant', 'set-plan', merchant!['id'], 'growth');
  t.equal(moved.code, 0, moved.stderr);
  t.equal(moved.json.plan, 'growth');
  t.same(
    await limits(merchant!['id']),
    { [custom.id]: 600, [plain.id]: 600, [revoked.id]: 90 },
    'live custom limits back to 600; revoked keys untouched',
  );
  const audit = await admin('key', 'audit', custom.id);
  t.equal(audit.code, 0, audit.stderr);
  t.match(audit.json.events[0], {
    action: 'rate_limit_changed',
    detail: { from: 1200, to: 600, reason: 'plan growth' },
    actor: 'operator',
  });
  t.equal(
    (await auditRows(plain.id)).filter((a) => a.action === 'rate_limit_changed').length,
    0,
    'a key at 600 gets no audit row',
  );

  await new Promise((r) => setTimeout(r, 1100)); // the gateway's key cache lives at most a second
  const res = await platform.client(custom.key).get('/api/v1/affiliates');
  t.equal(res.status, 200);
  t.equal(res.headers.get('ratelimit-limit'), '600');
});

async function limits(merchantId: string) {
  const rows = await platform.sql<
    { id: string; rate_limit_per_min: number }[]
  >`select id, rate_limit_per_min from api_keys where merchant_id = ${merchantId}`;
  return Object.fromEntries(rows.map((r) => [r.id, r.rate_limit_per_min]));
}

async function auditRows(keyId: string) {
  return platform.sql<{ action: string }[]>`select action from api_key_audit where key_id = ${keyId}`;
}
