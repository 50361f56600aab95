/**
 * The only way an affiliate leaves the service (API responses and domain events): field by field, so a column
 * added to the table is never exposed by accident. It lives in shared/ because the commissions service emits the
 * same object (affiliate.tier_promoted); AffiliateRow (queries/affiliates.ts) has the shape it reads.
 */
export { presentAffiliate } from '@platform/shared/affiliate-view';
