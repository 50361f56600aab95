import { isUniqueViolation } from '@platform/shared/db';
import { newId } from '@platform/shared/ids';
import type { Logger } from '@platform/shared/log';
import { invalidRequest } from '@platform/shared/payments/errors';
import type { AffiliatePayoutReply, AffiliatePayoutRequest } from '@platform/shared/payments/rpc';
import type { PaymentsDeps } from '../deps.ts';
import { decimalToMinor, minorToDecimal } from '@platform/shared/money';
import { payoutMovement, transferMovement } from '../domain/ledger-rules.ts';
import { findByAffiliatePayout, fundingAccount } from '../queries/affiliate-payouts.ts';
import { isBalanceInsufficient, postMovements } from '../queries/ledger.ts';
import { insertPayout } from '../queries/payouts.ts';
import type { PaymentsRoute } from '../serve.ts';

const reply = (p: { id: string; status: string; amount: string; currency: string }): AffiliatePayoutReply => ({
  ledger_payout_id: p.id,
  status: p.status as AffiliatePayoutReply['status'],
  amount: minorToDecimal(Number(p.amount), p.currency),
  currency: p.currency.toUpperCase(),
});

/**
 * An affiliate payout with method `platform`: in one transaction, a transfer from the merchant's connected account
 * (its available balance) to the affiliate, and a payout from there to the affiliate's bank on the sandbox rail.
 * The same affiliate payout asked again answers the ledger payout made the first time (a retried request, or the
 * commissions service's own retry after it failed to record the answer).
 */
export const affiliatePayoutRoute = (deps: PaymentsDeps): PaymentsRoute<AffiliatePayoutRequest> => ({
  name: 'affiliate_payout',
  run: async (request, log) => ({ outcome: 'ok', body: await affiliatePayout(deps, request, log) }),
});

async function affiliatePayout(deps: PaymentsDeps, request: AffiliatePayoutRequest, log: Logger) {
  const earlier = await findByAffiliatePayout(deps.sql, request.payout_id);
  if (earlier) {
    // Idempotent for the same payout only: the money that moved must be what is asked now, or the caller would
    // record another amount as paid. A disagreement is the caller's to settle by hand (it counts it as a mismatch).
    const asked = decimalToMinor(request.amount, request.currency.toLowerCase());
    if (asked !== Number(earlier.amount) || request.currency.toLowerCase() !== earlier.currency)
      throw invalidRequest(
        `Affiliate payout ${request.payout_id} was paid by ledger payout ${earlier.id} with ${minorToDecimal(Number(earlier.amount), earlier.currency)} ${earlier.currency.toUpperCase()}, not ${request.amount} ${request.currency}.`,
        { code: 'amount_mismatch', status: 409 },
      );
    return reply(earlier);
  }
  const account = await fundingAccount(deps.sql, request.merchant_id);
  if (!account)
    throw invalidRequest('The merchant has no connected account in live mode to pay affiliate payouts from.', {
      code: 'no_connected_account',
    });
  const currency = request.currency.toLowerCase();
  const amount = decimalToMinor(request.amount, currency);
  // Nothing to pay is no payout (zero converts, as any amount does).
  if (!amount) throw invalidRequest(`Invalid amount ${request.amount} ${request.currency}`, { param: 'amount' });
  const id = newId('po');
  const affiliate = request.affiliate_id;
  try {
    const payout = await deps.sql.begin(async (tx) => {
      // The payout row first: it claims the affiliate payout (unique), so a concurrent request for the same one
      // waits here for this transaction and then finds it, instead of being refused for the funds this one took.
      const transactionId = newId('txn');
      const row = await insertPayout(tx, {
        id,
        livemode: account.livemode,
        holder: affiliate,
        amount,
        currency,
        description: `Affiliate payout ${request.payout_id}`,
        metadata: { affiliate_payout: request.payout_id, merchant_id: request.merchant_id },
        destination_last4: request.destination_last4,
        balance_transaction: transactionId,
        arrival_date: new Date(Date.now() + 2 * deps.payoutRailStepMs),
        affiliate: { payout_id: request.payout_id, merchant_id: request.merchant_id, funded_by: account.id },
      });
      // Both balances locked once, in postMovements' order, as a returned payout's movements lock them (clock.ts):
      // the two never wait on each other in opposite orders (deadlock).
      await postMovements(tx, account.livemode, id, [
        {
          movement: transferMovement(account.id, affiliate, amount, currency),
          shown: {
            id: newId('txn'),
            holder: account.id,
            type: 'transfer',
            amount: -amount,
            fee: 0,
            status: 'available',
            available_on: new Date(),
            description: `Affiliate payout ${request.payout_id}`,
          },
        },
        {
          movement: payoutMovement(affiliate, amount, currency),
          shown: {
            id: transactionId,
            holder: affiliate,
            type: 'payout',
            amount: -amount,
            fee: 0,
            status: 'available',
            available_on: new Date(),
            description: `Affiliate payout ${request.payout_id}`,
          },
        },
      ]);
      return row;
    });
    log.info('affiliate payout made through the ledger', { payout_id: request.payout_id, ledger_payout_id: id });
    return reply(payout);
  } catch (err) {
    if (isBalanceInsufficient(err))
      throw invalidRequest(
        `The connected account ${account.id} does not have ${minorToDecimal(amount, currency)} ${request.currency} available.`,
        { code: 'balance_insufficient', cause: err },
      );
    // The same affiliate payout asked twice at once: the one that lost finds the first.
    if (isUniqueViolation(err, 'payment_payouts_affiliate_payout'))
      return reply((await findByAffiliatePayout(deps.sql, request.payout_id))!);
    throw err;
  }
}
