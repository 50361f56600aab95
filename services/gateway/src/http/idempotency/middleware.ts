import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { Counter, type Registry } from 'prom-client';
import { hashBody } from '@platform/shared/body-hash';
import { decryptSecretWithAny, encryptSecret, secretPlace } from '@platform/shared/crypto';
import { isDatabaseUnavailable, withinDeadline, type Sql } from '@platform/shared/db';
import type { Logger } from '@platform/shared/log';
import { openReply } from '@platform/shared/idempotent-reply';
import { captureAnswer, replayAnswer } from './answer.ts';
import { CLAIM, KEPT_REPLY, OUTCOME_UNKNOWN } from './kept-reply.ts';
import { claimKey, releaseKey, storeAnswer } from './queries.ts';

/** The time a look at a running key's row is given at least, on a loaded machine too. */
const POLL_TIME_MS = 200;

/** Stripe's bound on a key's length. */
export const MAX_KEY_LENGTH = 255;
const KEY_SHAPE = new RegExp(`^[\\x20-\\x7e]{1,${MAX_KEY_LENGTH}}$`);

/** How each API words its refusals (the error envelope of /api/v1, Stripe's error object on /v1). */
export interface IdempotencyRefusals {
  /** An Idempotency-Key that is empty, too long, or not printable ASCII (`problem` says so): 400. */
  invalidKey(res: Response, problem: string): void;
  /** The key was first used with another method, path or body. */
  mismatch(res: Response, key: string): void;
  /** The key's first request is still running after the wait. */
  inProgress(res: Response, key: string): void;
  /** Postgres did not answer: nothing was done. */
  unavailable(res: Response): void;
}

export interface IdempotencyOptions {
  refusals: IdempotencyRefusals;
  /**
   * Whose key this is: the API key (or dashboard user) the request authenticated as; keys of others never meet.
   * Undefined for a request that authenticated as no one, which is then not idempotent.
   */
  owner(res: Response): string | undefined;
  /** What else makes two requests different besides method, path and body (the Stripe-Account acted for). */
  context?(req: Request): string;
}

/**
 * Idempotency-Key with Stripe's semantics, as middleware placed after authentication and body parsing, right
 * before the operation. A request without the header goes straight on. With it, the first request claims the key
 * (under a lock on the key: queries.ts claimKey), does the work, and its answer is stored before it is sent; the same key with the same
 * fingerprint (method, path, context, body) within 24 hours replays that answer, status, body byte for byte and the
 * headers the operation set, with `Idempotent-Replayed: true`; with another fingerprint it is refused. Requests
 * that find the key's first request still running poll its row until it is answered, for at most `waitMs` (the
 * first request answers within its own deadline, which is as long), then are refused as in progress (409, as
 * Stripe does). Stored: what the operation answered below 500. A 5xx is not (Stripe replays its 500s; here a retry
 * must do the work): the key is released, except when this gateway gave up waiting for the service (503 on
 * RPC_TIMEOUT_MS), which may still commit up to the deadline; then the claim stays until the service keeps its reply
 * on it (replayed to the next request with the key) or gives it up, and lapses at locked_until in any case.
 */
export function createIdempotency(deps: {
  sql: Sql;
  log: Logger;
  waitMs: number;
  leaseMs: number;
  registry: Registry;
  /** ENCRYPTION_KEY first, then ENCRYPTION_KEYS_PREVIOUS: stored answers are encrypted at rest. */
  keys: readonly Buffer[];
}) {
  const { sql, log, waitMs, leaseMs, keys } = deps;
  // An answer can hold a secret shown once (a webhook signing secret, a single-use link): its body is kept
  // encrypted, as base64 of its bytes so that the replay is the same bytes whatever they are.
  // Bound to its key's row (owner and key): an answer copied to another key does not decrypt.
  const seal = (owner: string, key: string, body: Buffer) =>
    Buffer.from(encryptSecret(keys[0]!, body.toString('base64'), secretPlace('idempotency-answer', owner, key)));
  const unseal = (owner: string, key: string, stored: Buffer) =>
    Buffer.from(
      decryptSecretWithAny(keys, stored.toString(), secretPlace('idempotency-answer', owner, key)).plaintext,
      'base64',
    );
  // What became of the requests that carried a key: a rise of mismatches or of requests refused as in progress is a
  // client reusing keys, or a first request that keeps running.
  const outcomes = new Counter({
    name: 'idempotency_requests_total',
    help: 'POST requests with an Idempotency-Key, by outcome',
    labelNames: ['outcome'],
    registers: [deps.registry],
  });
  const counted = (outcome: string) => outcomes.inc({ outcome });

  return (opts: IdempotencyOptions): RequestHandler =>
    async function idempotent(req: Request, res: Response, next: NextFunction) {
      const key = req.headers['idempotency-key'];
      if (key === undefined) return next();
      if (typeof key !== 'string' || !KEY_SHAPE.test(key)) {
        counted('invalid_key');
        return opts.refusals.invalidKey(res, `must be 1 to ${MAX_KEY_LENGTH} printable ASCII characters`);
      }
      const owner = opts.owner(res);
      if (owner === undefined) return next();
      const requestId = res.locals['requestId'] as string;
      const fingerprint = hashBody({
        method: req.method,
        path: req.originalUrl,
        context: opts.context?.(req) ?? '',
        body: (req.body as unknown) ?? null,
      });
      const giveUpAt = Date.now() + waitMs;
      try {
        for (let pause = 10; ; pause = Math.min(pause * 2, 100)) {
          const state = await withinDeadline(
            claimKey(sql, { owner, key, fingerprint, requestId, leaseMs }),
            Math.max(1, giveUpAt - Date.now()),
          );
          if (state.kind === 'claimed') {
            // The service keeps its reply on the claim (shared/src/idempotent-reply.ts); a reply kept for an earlier
            // request with the key is answered by the operation in place of asking the service (kept-reply.ts).
            res.locals[CLAIM] = { owner, key };
            if (state.kept) {
              counted('replayed_late');
              res.locals[KEPT_REPLY] = {
                headers: state.kept.headers,
                data: openReply(keys, { owner, key }, state.kept.body),
              };
              res.setHeader('Idempotent-Replayed', 'true');
              res.setHeader('Original-Request', state.kept.requestId);
            } else counted('claimed');
            // A kept reply's claim stays its first request's: the answer is stored under that request's id.
            const holder = state.kept?.requestId ?? requestId;
            captureAnswer(res, (answer) => settle(owner, key, holder, answer, res.locals[OUTCOME_UNKNOWN] === true));
            return next();
          }
          if (!state.fingerprint.equals(fingerprint)) {
            counted('mismatch');
            return opts.refusals.mismatch(res, key);
          }
          if (state.kind === 'answered') {
            counted('replayed');
            return replayAnswer(res, { ...state.answer, body: unseal(owner, key, state.answer.body) }, state.requestId);
          }
          // The next look needs time of its own (a transaction of a few statements): one left less than that
          // would be cut short and answered as an outage rather than as the first request still running.
          if (Date.now() + pause + POLL_TIME_MS > giveUpAt) {
            counted('in_progress');
            return opts.refusals.inProgress(res, key);
          }
          await new Promise((resolve) => setTimeout(resolve, pause));
        }
      } catch (err) {
        if (isDatabaseUnavailable(err))
          log.warn('idempotency key: database unavailable', { err: err as Error, request_id: requestId });
        else log.error('idempotency key claim failed', { err: err as Error, request_id: requestId });
        counted('unavailable');
        opts.refusals.unavailable(res);
      }
    };

  /**
   * Keeps the answer, or gives the key up when it is a 5xx that says nothing was done (a 500 is not replayed: a
   * retry does the work), or leaves the claim to the service when the service's outcome is not known yet (this
   * gateway stopped waiting for it: `outcomeUnknown`): the service keeps its reply on the claim, or gives it up, and
   * the claim lapses at locked_until in any case. A failure to keep the answer is logged and the answer still goes
   * out: the claim then holds the service's reply, or lapses.
   */
  async function settle(
    owner: string,
    key: string,
    requestId: string,
    answer: { status: number; headers: Record<string, string | string[]>; body: Buffer },
    outcomeUnknown: boolean,
  ): Promise<void> {
    if (answer.status >= 500 && outcomeUnknown) return;
    try {
      const settled =
        answer.status < 500
          ? storeAnswer(sql, owner, key, requestId, { ...answer, body: seal(owner, key, answer.body) })
          : releaseKey(sql, owner, key, requestId);
      await withinDeadline(settled, waitMs);
    } catch (err) {
      log.warn('idempotency key: the answer was not stored', { err: err as Error, request_id: requestId });
    }
  }
}
