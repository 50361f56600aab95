import type { api, ApiOperation } from '@platform/shared/api';

/**
 * What a dashboard user may do, by role: the one table the gateway enforces on every dashboard route (its spec names
 * the permission it needs) and on every /api/v1 operation a dashboard session calls. docs/DASHBOARD.md (Team and roles) prints it, and a
 * test checks the two agree. An API key is not a user: its scopes (read, write) decide for it.
 */
export const ROLES = ['owner', 'admin', 'developer', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

export const PERMISSIONS = {
  read: 'see the programme: affiliates, commissions, payouts, figures, keys and endpoints (payout details masked)',
  programme: 'create and change affiliates, commissions, coupons, conversion events and tax forms',
  keys: 'create, change and revoke API keys',
  webhooks: 'manage webhook endpoints, reveal their signing secrets and replay deliveries',
  settings: 'change the programme settings and tiers',
  team: 'invite and add dashboard users, change their roles and remove them, and read the audit log',
  payouts:
    'create payouts and move them (sent, paid, failed), export them with bank details, change payout details, fund the balance and open the connected account',
  billing: 'see the plan, the saved card and the receipts, and upgrade the plan (a charge to the card)',
} as const;
export type Permission = keyof typeof PERMISSIONS;

export const PERMISSION_NAMES = Object.keys(PERMISSIONS) as Permission[];

/** The permissions of each role. Only an owner makes or unmakes an owner (team.ts). */
export const GRANTS: Record<Role, readonly Permission[]> = {
  owner: PERMISSION_NAMES,
  admin: PERMISSION_NAMES,
  developer: ['read', 'keys', 'webhooks'],
  viewer: ['read'],
};

export const can = (role: Role, permission: Permission): boolean => GRANTS[role].includes(permission);

/**
 * The permission of each /api/v1 operation when a dashboard session calls it: reads are `read`, each change the
 * permission of what it changes. Typed by the catalogue, so a new operation cannot be left out.
 */
export const API_PERMISSIONS: Record<keyof typeof api, Permission> = {
  listAffiliates: 'read',
  getAffiliate: 'read',
  createAffiliate: 'programme',
  updateAffiliate: 'programme',
  createPortalSession: 'programme',
  listCommissions: 'read',
  getCommission: 'read',
  updateCommission: 'programme',
  getAnalytics: 'read',
  listCoupons: 'read',
  createCoupon: 'programme',
  deleteCoupon: 'programme',
  recordEvent: 'programme',
  listEvents: 'read',
  getEvent: 'read',
  listClicks: 'read',
  getClick: 'read',
  createPayouts: 'payouts',
  listPayouts: 'read',
  exportPayouts: 'payouts',
  listPayoutExports: 'read',
  getPayout: 'read',
  listPayoutCommissions: 'read',
  updatePayout: 'payouts',
  createTaxForm: 'programme',
  listTaxForms: 'read',
  putPayoutDetails: 'payouts',
  getPayoutDetails: 'read',
  listPayoutDetailsChanges: 'read',
  createOnboardingLink: 'programme',
  createWebhookEndpoint: 'webhooks',
  listWebhookEndpoints: 'read',
  getWebhookEndpoint: 'read',
  updateWebhookEndpoint: 'webhooks',
  deleteWebhookEndpoint: 'webhooks',
  rotateWebhookEndpointSecret: 'webhooks',
  sendWebhookTestEvent: 'webhooks',
  listWebhookDeliveries: 'read',
  replayWebhookDelivery: 'webhooks',
  replayWebhookDeliveries: 'webhooks',
};

/** The permission an /api/v1 operation needs of a dashboard session; the router asks once per operation, at start. */
export function apiPermission(op: ApiOperation): Permission {
  const permission = (API_PERMISSIONS as Record<string, Permission | undefined>)[op.operationId];
  if (!permission) throw new Error(`API_PERMISSIONS has no entry for ${op.operationId}`);
  return permission;
}

/** The refusal's message: what the role lacks, in words. */
export const refusal = (role: Role, permission: Permission): string =>
  `Your role (${role}) may not ${PERMISSIONS[permission].replace(/ \(.*\)$/, '')}; ask an owner or admin`;
