import t from 'tap';
import { headers } from '@nats-io/nats-core';
import { PLATFORM_PAYOUT_SUBJECTS, RPC_OUTCOME_HEADER } from '@platform/shared/catalogue';
import { newId } from '@platform/shared/ids';
import { decodeJson, encodeJson } from '@platform/shared/nats';
import type { AffiliatePayoutReply, AffiliatePayoutRequest } from '@platform/shared/payments/rpc';
import { affiliate, approvedCommissions, payoutMerchant, startPayoutsPlatform } from '../helpers/payouts.ts';
import { putPayoutDetails } from '../tax-forms/setup.ts';

/**
 * A platform send gives the payment service a deadline inside the caller's (the gateway's RPC_TIMEOUT_MS, 5 s by
 * default): money it moves is answered while the caller still waits, never after the gateway answered 503. A stand-in
 * for the payment service answers on its subject here.
 */
t.setTimeout(60_000);

const GATEWAY_TIMEOUT_MS = 5000;
const { platform, service } = await startPayoutsPlatform(t);

/** What the stand-in does with a request: nothing (no answer), or answer `made` right before its deadline. */
let behaviour: 'silent' | 'late' = 'silent';
const asked: AffiliatePayoutRequest[] = [];
const sub = platform.nc.subscribe(PLATFORM_PAYOUT_SUBJECTS.pay(platform.prefix), {
  callback: (_err, msg) => {
    const request = decodeJson<AffiliatePayoutRequest>(msg.data);
    asked.push(request);
    if (behaviour === 'silent') return;
    setTimeout(
      () => {
        const h = headers();
        h.set(RPC_OUTCOME_HEADER, 'ok');
        const reply: AffiliatePayoutReply = {
          ledger_payout_id: newId('po'),
          status: 'pending',
          amount: request.amount,
          currency: request.currency,
        };
        msg.respond(encodeJson(reply), { headers: h });
      },
      Math.max(0, request.deadline - Date.now() - 30),
    );
  },
});
t.teardown(() => sub.unsubscribe());

async function pendingPayout(email: string) {
  const m = await payoutMerchant(platform, ['tax_form_policy=none', 'min_payout="1"']);
  const ana = await affiliate(m, email);
  await putPayoutDetails(m.client, ana.id, { method: 'bank', iban: 'DE89370400440532013000' });
  await approvedCommissions(platform, service, m.id, ana.id, [{ amount: '600.00' }]);
  const [payout] = (await m.client.post('/api/v1/payouts')).body.data;
  return { m, payout };
}

t.test('no answer: the send gives up before the caller does, and the payout stays sending', async (t) => {
  const { m, payout } = await pendingPayout('silent@example.com');
  const before = Date.now();
  const sent = await m.client.patch(`/api/v1/payouts/${payout.id}`, { status: 'sent', method: 'platform' });
  t.equal(sent.status, 503, sent.text);
  t.match(sent.body.error.message, /^The payment service did not answer/, "the service's answer, not the gateway's");
  t.equal(asked.length, 1);
  t.ok(asked[0]!.deadline < before + GATEWAY_TIMEOUT_MS, 'the payment service must finish before the caller stops');
  t.equal((await m.client.get(`/api/v1/payouts/${payout.id}`)).body.status, 'sending');
});

t.test('money moved just before the deadline: the caller gets 200, the payout sent', async (t) => {
  behaviour = 'late';
  const { m, payout } = await pendingPayout('late@example.com');
  const sent = await m.client.patch(`/api/v1/payouts/${payout.id}`, { status: 'sent', method: 'platform' });
  t.equal(sent.status, 200, sent.text);
  t.match(sent.body, { status: 'sent', method: 'platform', reference: /^po_/ });
  t.equal((await m.client.get(`/api/v1/payouts/${payout.id}`)).body.status, 'sent');
});
