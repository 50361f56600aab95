import { headers as natsHeaders } from '@nats-io/nats-core';
import type { Msg } from '@nats-io/transport-node';
import type { IdempotencyClaim, KeptReply } from '@platform/shared/idempotent-reply';
import type { Response } from 'express';
import type { Requester } from '../requester.ts';

/** res.locals: the Idempotency-Key claim this request holds, passed on to the service with the operation. */
export const CLAIM = 'idempotencyClaim';
/** res.locals: the reply the service kept on the claim for an earlier request with the key. */
export const KEPT_REPLY = 'idempotencyKeptReply';
/** res.locals: true when the gateway stopped waiting for the service's answer, which may still come (middleware.ts). */
export const OUTCOME_UNKNOWN = 'idempotencyOutcomeUnknown';

/** The claim the request holds, for the operation's RPC request (`idempotency`); none without an Idempotency-Key. */
export const claimOf = (res: Response): IdempotencyClaim | undefined =>
  res.locals[CLAIM] as IdempotencyClaim | undefined;

/**
 * The requester an operation asks its service with, for a request with an Idempotency-Key: a kept reply answers in
 * place of the service (the work was done once, its reply is rendered as the service's would be), and a request
 * that gets no reply (a timeout, a connection closed after the request left) marks the outcome as unknown, so that
 * the claim is left to the service. Without a claim, the requester itself.
 */
export function claimRequester(res: Response, requester: Requester): Requester {
  if (res.locals[CLAIM] === undefined) return requester;
  const kept = res.locals[KEPT_REPLY] as KeptReply | undefined;
  return {
    ...requester,
    async request(...args: Parameters<Requester['request']>) {
      if (kept) return { kind: 'reply', msg: asMsg(kept) };
      const outcome = await requester.request(...args);
      if (outcome.kind === 'timeout' || outcome.kind === 'closed') res.locals[OUTCOME_UNKNOWN] = true;
      return outcome;
    },
  };
}

/** What the operations read of a reply: its data and headers. */
function asMsg(kept: KeptReply): Msg {
  const headers = natsHeaders();
  for (const [name, value] of Object.entries(kept.headers)) headers.set(name, value);
  return { data: kept.data, headers } as unknown as Msg;
}
