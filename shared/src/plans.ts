import { divideHalfEven } from './money.ts';

/**
 * The plans: one catalogue that the plan gating (API keys, per-key rate limits), the dashboard's Settings › Plan and
 * billing (prices, proration) all read, so that what a page shows and what the gateway allows cannot disagree.
 * Prices are integer minor units of `currency` per month. Enterprise has no self-serve price (`price: null`,
 * "contact us"): its terms are negotiated, and the operator sets it (`npm run admin -- merchant set-plan`).
 */
export const PLANS = ['free', 'starter', 'growth', 'scale', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

export interface PlanTerms {
  id: Plan;
  name: string;
  /** A month's price in minor units of `currency`, or null when the plan is sold by contract only. */
  price: { amount: number; currency: string } | null;
  /** What the plan allows; every check of the platform reads these. */
  allows: {
    /** API keys (/api/v1 with a key): 402 PLAN_REQUIRED below. */
    api_keys: boolean;
    /** A per-key rate limit other than the default. */
    custom_rate_limits: boolean;
  };
  limits: {
    /** Requests per minute per API key: the default, and the most a key may be given (null: no API access). */
    rate_limit_per_min: { default: number; max: number } | null;
  };
}

/** Requests per minute of a key whose limit was not set. */
export const DEFAULT_RATE_LIMIT = 600;
const CUSTOM_RATE_MAX = 60000;

const usd = (amount: number) => ({ amount, currency: 'usd' });
const noApi = { allows: { api_keys: false, custom_rate_limits: false }, limits: { rate_limit_per_min: null } };
const api = {
  allows: { api_keys: true, custom_rate_limits: false },
  limits: { rate_limit_per_min: { default: DEFAULT_RATE_LIMIT, max: DEFAULT_RATE_LIMIT } },
};
const customApi = {
  allows: { api_keys: true, custom_rate_limits: true },
  limits: { rate_limit_per_min: { default: DEFAULT_RATE_LIMIT, max: CUSTOM_RATE_MAX } },
};

/** In PLANS' order, cheapest first: a plan's index is its rank (an upgrade goes to a higher one). */
export const PLAN_CATALOGUE: Readonly<Record<Plan, PlanTerms>> = {
  free: { id: 'free', name: 'Free', price: usd(0), ...noApi },
  starter: { id: 'starter', name: 'Starter', price: usd(2900), ...noApi },
  growth: { id: 'growth', name: 'Growth', price: usd(9900), ...api },
  scale: { id: 'scale', name: 'Scale', price: usd(29900), ...customApi },
  enterprise: { id: 'enterprise', name: 'Enterprise', price: null, ...customApi },
};

export const isPlan = (value: unknown): value is Plan => (PLANS as readonly unknown[]).includes(value);

/** The terms of a plan by its stored name; a name the catalogue lacks allows nothing (never a wider plan). */
export const planTerms = (plan: string): PlanTerms => (isPlan(plan) ? PLAN_CATALOGUE[plan] : PLAN_CATALOGUE.free);

export const allowsApiKeys = (plan: string): boolean => planTerms(plan).allows.api_keys;
export const allowsCustomRateLimits = (plan: string): boolean => planTerms(plan).allows.custom_rate_limits;

/** The cheapest plan that allows something, for the refusal's words ("needs the Growth plan or higher"). */
export const lowestPlanAllowing = (what: keyof PlanTerms['allows']): PlanTerms =>
  PLANS.map((p) => PLAN_CATALOGUE[p]).find((t) => t.allows[what])!;

/** Whether `to` ranks above `from`. */
export const isUpgrade = (from: Plan, to: Plan): boolean => PLANS.indexOf(to) > PLANS.indexOf(from);

/** A month from `start`, on the same day of the month where it has one (Jan 31 → Feb 28/29), as billing periods run. */
export function addMonth(start: Date): Date {
  const end = new Date(start);
  end.setUTCMonth(start.getUTCMonth() + 1, 1);
  const lastDay = new Date(Date.UTC(end.getUTCFullYear(), end.getUTCMonth() + 1, 0)).getUTCDate();
  end.setUTCDate(Math.min(start.getUTCDate(), lastDay));
  return end;
}

/**
 * What an upgrade charges, in minor units: within a paid period, the difference of the two monthly prices for the
 * part of the period left (by the second, rounded half-even); with no period running (Free, a plan the operator
 * set, or a period that has ended), the new plan's whole month, and a new period starts. Both plans priced in one
 * currency (the catalogue's); the caller refuses plans without a price before asking.
 */
export function upgradeCharge(
  from: Plan,
  to: Plan,
  period: { start: Date; end: Date } | null,
  now: Date,
): { amount: number; currency: string; period: { start: Date; end: Date } } {
  const price = PLAN_CATALOGUE[to].price!;
  const running = period && period.end > now && period.start <= now && (PLAN_CATALOGUE[from].price?.amount ?? 0) > 0;
  if (!running) return { amount: price.amount, currency: price.currency, period: { start: now, end: addMonth(now) } };
  const seconds = (a: Date, b: Date) => Math.floor((b.getTime() - a.getTime()) / 1000);
  const difference = price.amount - PLAN_CATALOGUE[from].price!.amount;
  const amount = divideHalfEven(difference * seconds(now, period.end), Math.max(1, seconds(period.start, period.end)));
  return { amount, currency: price.currency, period };
}
