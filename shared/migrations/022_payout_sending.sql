-- Platform payouts are claimed before money moves: `sending` is committed (row lock, state check) before the payments
-- service is asked to pay, so a cancel that comes later is refused, and one that came first is seen by the claim.
-- send_attempted_at: when the payments service was last asked (the background pass re-asks a payout left sending
-- longer than its bound); send_deadline: the moment after which that request can no longer move money (the payments
-- service drops a request past its deadline), so a refusal reverts the payout to pending only when no earlier request
-- can still succeed; send_destination_last4: what the first request named, so that every retry asks the same.
alter table payouts drop constraint payouts_status_check;
alter table payouts add constraint payouts_status_check
  check (status in ('pending', 'sending', 'sent', 'paid', 'failed', 'canceled'));
alter table payouts
  add column send_attempted_at      timestamptz,
  add column send_deadline          timestamptz,
  add column send_destination_last4 text;
alter table payouts add constraint payouts_sending_attempt
  check (status <> 'sending' or (method = 'platform' and send_attempted_at is not null and send_deadline is not null
                                 and send_destination_last4 is not null));
-- What the background pass looks for: the few payouts left sending.
create index payouts_sending on payouts (send_attempted_at) where status = 'sending';
