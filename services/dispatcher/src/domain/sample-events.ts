import type { DomainEventType } from '@platform/shared/catalogue';

/** The data of a test event (POST …/test): realistic shapes with obviously fake identifiers. */
export function sampleEventData(type: DomainEventType, at: string): Record<string, unknown> {
  const affiliate = {
    id: 'aff_test00000000000000000000000',
    slug: 'test-affiliate',
    email: 'affiliate@example.com',
    display_name: 'Test Affiliate',
    status: type === 'affiliate.suspended' ? 'suspended' : 'approved',
    tier_id: null,
    parent_id: null,
    lifetime_commissions_paid: 0,
    custom_commission_rate: null,
    referral_url: 'https://example.com/r/test-affiliate',
    created_at: at,
    updated_at: at,
  };
  const commission = (status: string) => ({
    commission_id: 'com_test00000000000000000000000',
    affiliate_id: affiliate.id,
    amount: 12.5,
    currency: 'USD',
    status,
    order_id: 'order_test_1',
    event_id: 'evt_test00000000000000000000000',
    level: 0,
  });
  const payout = (status: string) => ({
    payout_id: 'po_test000000000000000000000000',
    affiliate_id: affiliate.id,
    amount: 125,
    currency: 'USD',
    status,
    commission_ids: ['com_test00000000000000000000000'],
    commission_count: 1,
    ...(status === 'failed' ? { failure_reason: 'account_closed' } : {}),
  });
  switch (type) {
    case 'affiliate.created':
    case 'affiliate.approved':
    case 'affiliate.suspended':
      return affiliate;
    case 'affiliate.tier_promoted':
      return { ...affiliate, tier_id: 'tier_test0000000000000000000000', previous_tier_id: null };
    case 'commission.created':
      return commission('pending');
    case 'commission.approved':
      return commission('approved');
    case 'commission.voided':
      return commission('voided');
    case 'payout.sent':
      return payout('sent');
    case 'payout.paid':
      return payout('paid');
    case 'payout.failed':
      return payout('failed');
    case 'fraud.flagged':
      return {
        affiliate_id: affiliate.id,
        event_id: 'evt_test00000000000000000000000',
        rule: 'self_referral',
        details: { test: true },
      };
    case 'tax_form.submitted':
      return { affiliate_id: affiliate.id, form_type: 'W-9', submitted_at: at };
  }
}
