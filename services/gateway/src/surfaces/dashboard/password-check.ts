import { Counter, type Registry } from 'prom-client';
import { ApiError } from '@platform/shared/errors';
import { hashPassword, needsRehash, verifyNothing, verifyPassword } from '@platform/shared/passwords';

/**
 * Password work in this process, one scrypt at a time: each takes 128 MiB outside the heap (shared/src/passwords.ts)
 * and half a second of a core, so unbounded parallel checks would exhaust the container's memory and starve the API.
 * A check waits its turn behind at most MAX_WAITING others and for at most WAIT_MS; past either it is refused with
 * 503 UNAVAILABLE and Retry-After (the caller releases its reserved attempt: nothing was guessed).
 */
const CONCURRENCY = 1;
const MAX_WAITING = 16;
// Half a second per check on an idle core makes a full queue about 8 s; the bound is for a loaded host, and stays
// below the 60 s that ingress controllers give a request by default.
const WAIT_MS = 30_000;

export interface PasswordChecker {
  /** Whether `password` matches `stored`; with no stored hash (no such user), spends a check's time and says no. */
  verify(password: string, stored: string | null): Promise<boolean>;
  /** A new hash of `password` at today's cost (a stored hash made with less is replaced at sign-in). */
  hash(password: string): Promise<string>;
  /** Whether `stored` was made with less than today's cost and should be replaced by a new hash. */
  needsRehash(stored: string): boolean;
}

/**
 * `cost` is log2 of scrypt's N for new hashes (the gateway's PASSWORD_HASH_COST): a stored hash made with less is
 * replaced at sign-in.
 */
export function createPasswordChecker(cost: number, registry?: Registry): PasswordChecker {
  const verifications = new Counter({
    name: 'dashboard_password_verifications_total',
    help: 'Dashboard passwords checked with scrypt (sign-in and reveal-secret), by result',
    labelNames: ['result'],
    registers: registry ? [registry] : [],
  });
  let running = 0;
  const waiting: (() => void)[] = [];

  const acquire = () =>
    new Promise<void>((resolve, reject) => {
      if (running < CONCURRENCY) {
        running++;
        return resolve();
      }
      if (waiting.length >= MAX_WAITING) return reject(busy());
      const turn = () => {
        clearTimeout(timer);
        running++;
        resolve();
      };
      const timer = setTimeout(() => {
        waiting.splice(waiting.indexOf(turn), 1);
        reject(busy());
      }, WAIT_MS);
      waiting.push(turn);
    });
  const release = () => {
    running--;
    waiting.shift()?.();
  };
  const exclusive = async <T>(work: () => Promise<T>): Promise<T> => {
    await acquire();
    try {
      return await work();
    } finally {
      release();
    }
  };

  return {
    verify: (password, stored) =>
      exclusive(async () => {
        const ok = stored === null ? await verifyNothing(password, cost) : await verifyPassword(password, stored);
        verifications.inc({ result: stored === null ? 'no_user' : ok ? 'match' : 'mismatch' });
        return ok;
      }),
    hash: (password) => exclusive(() => hashPassword(password, cost)),
    needsRehash: (stored) => needsRehash(stored, cost),
  };
}

const busy = () => new ApiError('UNAVAILABLE', 'Too many passwords are being checked; try again in a moment');
