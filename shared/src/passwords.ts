import { randomBytes, scrypt as scryptCb, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

/**
 * Dashboard passwords: scrypt, stored as `scrypt$N$r$p$salt$hash` (base64url), so that the cost can be raised later
 * without invalidating stored hashes: each is checked with the parameters it was made with, and one made with less
 * than today's cost is replaced at its owner's next successful sign-in (needsRehash).
 *
 * The cost is OWASP's Password Storage Cheat Sheet recommendation for scrypt: N=2^17, r=8, p=1. One evaluation takes
 * 128 × N × r bytes (128 MiB) outside the JavaScript heap, four times Node's default `maxmem`, so the limit is raised
 * for it; callers bound how many run at once (the gateway's password checker runs one at a time).
 *
 * `cost` is log2(N). Only the test suite passes less than PASSWORD_COST (through the gateway's PASSWORD_HASH_COST,
 * which refuses a lower value outside APP_ENV=test): its files sign in hundreds of times, and what they check is the
 * flow, not the work factor, which the files about password work check at today's cost.
 */
const scrypt = promisify(scryptCb) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: object,
) => Promise<Buffer>;
/** Today's cost, log2(N). */
export const PASSWORD_COST = 17;
const N = 2 ** PASSWORD_COST;
const R = 8;
const P = 1;
const KEY_LENGTH = 32;
/** Parameters above these are refused rather than evaluated: a stored value cannot make a check cost more than today's. */
const MAX_MEMORY = 128 * N * R * P;
/** The scrypt memory a check may take, with room for OpenSSL's own small overhead above 128 × N × r × p. */
const MAXMEM = 2 * MAX_MEMORY;

export async function hashPassword(password: string, cost = PASSWORD_COST): Promise<string> {
  const salt = randomBytes(16);
  const n = 2 ** cost;
  const hash = await scrypt(password, salt, KEY_LENGTH, { N: n, r: R, p: P, maxmem: MAXMEM });
  return ['scrypt', n, R, P, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

function parse(stored: string) {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  const params = { N: Number(n), r: Number(r), p: Number(p) };
  if (scheme !== 'scrypt' || !salt || !hash) return null;
  if (![params.N, params.r, params.p].every((v) => Number.isSafeInteger(v) && v > 0)) return null;
  // scrypt's N is a power of two above 1; anything else would make scrypt throw instead of not matching.
  if (params.N < 2 || (params.N & (params.N - 1)) !== 0) return null;
  if (128 * params.N * params.r * params.p > MAX_MEMORY) return null;
  return { params, salt: Buffer.from(salt, 'base64url'), hash: Buffer.from(hash, 'base64url') };
}

/** Whether `password` matches `stored`; a malformed stored value (or one costlier than allowed) matches nothing. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parse(stored);
  if (!parsed || parsed.hash.length === 0) return false;
  const actual = await scrypt(password, parsed.salt, parsed.hash.length, { ...parsed.params, maxmem: MAXMEM });
  return timingSafeEqual(actual, parsed.hash);
}

/** Whether `stored` was made with less than `cost` (or is unreadable) and should be replaced by a new hash. */
export function needsRehash(stored: string, cost = PASSWORD_COST): boolean {
  const parsed = parse(stored);
  return !parsed || parsed.params.N < 2 ** cost || parsed.params.r < R || parsed.params.p < P;
}

/** Spends the time of one check when there is no hash to check against, so timing does not reveal unknown accounts. */
const dummies = new Map<number, Promise<string>>();
export async function verifyNothing(password: string, cost = PASSWORD_COST): Promise<false> {
  let dummy = dummies.get(cost);
  if (!dummy) dummies.set(cost, (dummy = hashPassword('no account has this password', cost)));
  await verifyPassword(password, await dummy);
  return false;
}
