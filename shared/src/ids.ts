import { randomFillSync } from 'node:crypto';

export type IdPrefix =
  | 'mer'
  | 'aff'
  | 'com'
  | 'evt'
  | 'key'
  | 'we'
  | 'msg'
  | 'dlv'
  | 'tier'
  | 'cpn'
  | 'vis'
  | 'po'
  | 'req'
  | 'usr'
  | 'vlt'
  | 'txf'
  | 'obl'
  | 'pdc'
  | 'acct'
  | 'pi'
  | 'txn'
  | 'pkey'
  | 'mail'
  | 'aud'
  | 'inv'
  | 'bch'
  | 'bev';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'; // Crockford base32, lower case

/**
 * `prefix_` + 26 characters: 48 bits of milliseconds then 80 random bits, in base32, so that ids sort by time
 * (ULID layout). Ids made in the same millisecond are unordered among themselves, which lists break by created_at.
 */
export function newId(prefix: IdPrefix, now = Date.now()): string {
  let out = '';
  let time = now;
  for (let i = 9; i >= 0; i--) {
    out = ALPHABET[time % 32] + out;
    time = Math.floor(time / 32);
  }
  const random = nextRandom(10);
  // 80 bits -> 16 base32 characters, 5 bits at a time.
  let bits = 0;
  let value = 0;
  for (const byte of random) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  return `${prefix}_${out}`;
}

// Random bytes are drawn 4 KiB at a time: one system call per ~400 ids instead of one per id (request ids are
// made on every request).
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

function nextRandom(size: number): Buffer {
  if (poolOffset + size > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const bytes = pool.subarray(poolOffset, poolOffset + size);
  poolOffset += size;
  return bytes;
}

function idPattern(prefix: IdPrefix): RegExp {
  return new RegExp(`^${prefix}_[0-9a-hjkmnp-tv-z]{26}$`);
}

/** The milliseconds an id was made at (its first 10 characters), or undefined when it is no id of that kind. */
export function idTime(prefix: IdPrefix, value: string): number | undefined {
  if (!isId(prefix, value)) return undefined;
  let time = 0;
  for (const c of value.slice(prefix.length + 1, prefix.length + 11)) time = time * 32 + ALPHABET.indexOf(c);
  return time;
}

/** True when `value` has the shape of an id of that kind; anything else can never name a row. */
export function isId(prefix: IdPrefix, value: unknown): value is string {
  return typeof value === 'string' && value.length === prefix.length + 27 && idPattern(prefix).test(value);
}
