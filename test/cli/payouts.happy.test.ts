import t from 'tap';
import { runAdmin } from '../helpers/cli.ts';
import { affiliate, approvedCommissions, payoutMerchant, startPayoutsPlatform } from '../helpers/payouts.ts';

/** `npm run -s admin -- payout create|list|mark`, as its own process against the platform's database. */

const { platform, service } = await startPayoutsPlatform(t);
const admin = (...args: string[]) => runAdmin(platform.databaseUrl, ...args);

t.test('payout create, list and mark: the API’s payouts, moves and webhooks', async (t) => {
  const m = await payoutMerchant(platform, ['tax_form_policy=none']);
  const ana = await affiliate(m, 'ana@example.com');
  const bo = await affiliate(m, 'bo@example.com');
  const ids = await approvedCommissions(platform, service, m.id, ana.id, [{ amount: '612.34' }]);
  await approvedCommissions(platform, service, m.id, bo.id, [{ amount: '900.00' }]);

  const created = await admin('payout', 'create', m.id, '--affiliate', ana.id);
  t.equal(created.code, 0, created.stderr);
  t.equal(created.json.length, 1);
  const payout = created.json[0];
  t.match(payout, { affiliate_id: ana.id, amount: 61.23, currency: 'USD', status: 'pending', commission_ids: ids });
  t.same((await m.client.get(`/api/v1/payouts/${payout.id}`)).body, payout, 'the API shows the same payout');

  const listed = await admin('payout', 'list', m.id, '--status', 'pending');
  t.equal(listed.code, 0, listed.stderr);
  t.same(
    listed.json.map((p: { id: string }) => p.id),
    [payout.id],
  );

  const sent = await admin('payout', 'mark', m.id, payout.id, 'sent', '--reference', 'WIRE-42');
  t.equal(sent.code, 0, sent.stderr);
  t.match(sent.json, { id: payout.id, status: 'sent', method: 'manual', reference: 'WIRE-42' });
  const paid = await admin('payout', 'mark', m.id, payout.id, 'paid');
  t.equal(paid.code, 0, paid.stderr);
  t.equal(paid.json.status, 'paid');
  t.equal((await m.client.get(`/api/v1/commissions/${ids[0]}`)).body.status, 'paid');
  t.equal((await m.client.get(`/api/v1/affiliates/${ana.id}`)).body.lifetime_commissions_paid, 61.23);
  const events = await platform.sql<{ type: string }[]>`
    select type from outbox where merchant_id = ${m.id} and type like 'payout.%' order by seq`;
  t.same(
    events.map((e) => e.type),
    ['payout.sent', 'payout.paid'],
    'the webhooks are written with the moves',
  );

  const rest = await admin('payout', 'create', m.id);
  t.equal(rest.code, 0, rest.stderr);
  t.same(
    rest.json.map((p: { affiliate_id: string }) => p.affiliate_id),
    [bo.id],
  );
});

t.test('refusals: exit 2 with the reason on stderr', async (t) => {
  const m = await payoutMerchant(platform, ['tax_form_policy=none']);
  const ana = await affiliate(m, 'ana@example.com');
  await approvedCommissions(platform, service, m.id, ana.id, [{ amount: '900.00' }]);
  const [payout] = (await admin('payout', 'create', m.id)).json;
  const cases: [string[], string][] = [
    [
      ['payout', 'mark', m.id, payout.id, 'paid'],
      'admin: A pending payout cannot move to paid; allowed moves from pending: sent, canceled\n',
    ],
    [
      ['payout', 'mark', m.id, payout.id, 'approved'],
      'admin: the status must be one of sent, paid, failed, canceled\n',
    ],
    [
      ['payout', 'mark', m.id, payout.id, 'canceled', '--reason', 'x'],
      'admin: --reason is only accepted with status failed\n',
    ],
    [
      ['payout', 'mark', m.id, 'po_01jd3t6m0s2e4w5x6y7z8a9b0c', 'sent'],
      `admin: no payout po_01jd3t6m0s2e4w5x6y7z8a9b0c at merchant ${m.id}\n`,
    ],
    [
      ['payout', 'list', m.id, '--status', 'done'],
      'admin: --status must be one of pending, sending, sent, paid, failed, canceled\n',
    ],
    [
      ['payout', 'create', m.id, '--affiliate', 'aff_01jd3t6m0s2e4w5x6y7z8a9b0c'],
      `admin: no affiliate aff_01jd3t6m0s2e4w5x6y7z8a9b0c at merchant ${m.id}\n`,
    ],
    [['payout', 'create', 'mer_nope'], 'admin: no merchant mer_nope\n'],
  ];
  for (const [args, stderr] of cases) {
    const run = await admin(...args);
    t.equal(run.code, 2, args.join(' '));
    t.equal(run.stderr, stderr);
    t.equal(run.stdout, '');
  }
  t.equal((await admin('payout', 'mark', m.id, payout.id, 'sent')).code, 0);
  const failed = await admin('payout', 'mark', m.id, payout.id, 'failed');
  t.equal(failed.stderr, 'admin: --reason is required with status failed\n');
  const ok = await admin('payout', 'mark', m.id, payout.id, 'failed', '--reason', 'account closed');
  t.match(ok.json, { status: 'failed', failure_reason: 'account closed' });
});
