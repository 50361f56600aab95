import { headers } from '@nats-io/nats-core';
import { tracingEnabled } from '@platform/shared/tracing/context';
import { inConsumerBatchSpan } from '@platform/shared/tracing/nats';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import { Counter, type Registry } from 'prom-client';
import {
  RPC_OUTCOME_HEADER,
  trackingSubject,
  type RpcError,
  type RpcOutcome,
  type TrackingOperation,
  type TrackReferralReply,
  type TrackReferralRequest,
  type TrackVisitRequest,
} from '@platform/shared/catalogue';
import type { Sql } from '@platform/shared/db';
import { ApiError, notFound } from '@platform/shared/errors';
import { isId } from '@platform/shared/ids';
import type { Logger } from '@platform/shared/log';
import { decodeJson, encodeJson } from '@platform/shared/nats';
import type { Worker } from '@platform/shared/service';
import { TrackVisitBody, type TrackedVisit } from '@platform/shared/schemas/tracking';
import { compileValidator } from '@platform/shared/validation';
import { findMerchant, findMerchantByTrackingHost, type MerchantWithSettings } from '../queries/merchants.ts';
import { landingUrlFor, recordVisit } from './record-visit.ts';

const SLUG = /^[a-z0-9][a-z0-9-]{1,62}$/;
const HOST = /^[a-z0-9.-]{1,253}$/i;

interface Answer {
  outcome: Extract<RpcOutcome, 'ok' | 'created'>;
  body: TrackedVisit | TrackReferralReply;
}

/**
 * Answers the gateway's public tracking requests (catalogue: trackingSubject): referral-link clicks and the
 * tracking script's visits. Queue group "events", so each request is handled by one replica. The visitor's IP and
 * user agent arrive here but are never logged; only the IP's HMAC is stored.
 */
export function serveTracking(opts: {
  nc: NatsConnection;
  sql: Sql;
  prefix: string;
  log: Logger;
  registry: Registry;
  ipHashKey: Buffer;
}): Worker {
  const { nc, sql, prefix, log, ipHashKey } = opts;
  const validateVisitBody = compileValidator<TrackVisitBody>(TrackVisitBody, 'body');
  const handled = new Counter({
    name: 'tracking_requests_total',
    help: 'Referral clicks and script visits handled, by kind and result code',
    labelNames: ['kind', 'code'],
    registers: [opts.registry],
  });
  const inFlight = new Set<Promise<void>>();

  const resolveMerchant = async (
    merchant: TrackReferralRequest['merchant'],
  ): Promise<MerchantWithSettings | undefined> => {
    if ('id' in merchant) return isId('mer', merchant.id) ? findMerchant(sql, merchant.id) : undefined;
    return HOST.test(merchant.host) ? findMerchantByTrackingHost(sql, merchant.host) : undefined;
  };

  const referral = async (request: TrackReferralRequest): Promise<Answer> => {
    const merchant = SLUG.test(request.slug) ? await resolveMerchant(request.merchant) : undefined;
    if (!merchant) throw notFound('referral link');
    const redirectUrl = landingUrlFor(merchant, request.slug);
    // Without a landing page there is nowhere to send the visitor; nothing is recorded.
    if (!redirectUrl) throw new ApiError('NOT_FOUND', 'This referral link has no landing page configured');
    const visit = await recordVisit(sql, ipHashKey, {
      merchant,
      slug: request.slug,
      currentVisitId: request.current_visit_id,
      client: request.client,
      fingerprint: null,
      landingUrl: redirectUrl,
    });
    return {
      outcome: visit.reused ? 'ok' : 'created',
      body: { visit_id: visit.visit_id, max_age_seconds: visit.max_age_seconds, redirect_url: redirectUrl },
    };
  };

  const scriptVisit = async (request: TrackVisitRequest): Promise<Answer> => {
    const body = validateVisitBody(request.body);
    const merchant = isId('mer', body.merchant_id) ? await findMerchant(sql, body.merchant_id) : undefined;
    if (!merchant) throw notFound('referral link');
    const visit = await recordVisit(sql, ipHashKey, {
      merchant,
      slug: body.via,
      currentVisitId: body.visit_id ?? null,
      client: request.client,
      fingerprint: body.fingerprint ?? null,
      landingUrl: body.landing_url ?? null,
    });
    return {
      outcome: visit.reused ? 'ok' : 'created',
      body: { visit_id: visit.visit_id, max_age_seconds: visit.max_age_seconds },
    };
  };

  const handle = async (kind: TrackingOperation, msg: Msg): Promise<void> => {
    let request: TrackReferralRequest | TrackVisitRequest;
    try {
      request = decodeJson(msg.data);
    } catch {
      log.warn('undecodable tracking request', { kind });
      return;
    }
    // The gateway has already answered 503: recording the visit now would only surprise the visitor later.
    if (Date.now() > request.deadline) {
      handled.inc({ kind, code: 'EXPIRED' });
      return;
    }
    let outcome: RpcOutcome;
    let body: unknown;
    try {
      const answer =
        kind === 'referral'
          ? await referral(request as TrackReferralRequest)
          : await scriptVisit(request as TrackVisitRequest);
      outcome = answer.outcome;
      body = answer.body;
      log.debug('referral visit', { request_id: request.request_id, kind, visit_id: answer.body.visit_id, outcome });
    } catch (e) {
      let error: RpcError;
      if (e instanceof ApiError) {
        error = { code: e.code, message: e.message, ...(e.details ? { details: e.details } : {}) };
      } else {
        log.error('tracking request failed', { request_id: request.request_id, kind, err: e as Error });
        error = { code: 'INTERNAL', message: 'Something went wrong on our side' };
      }
      outcome = 'error';
      body = error;
    }
    handled.inc({ kind, code: outcome === 'error' ? (body as RpcError).code : outcome });
    const h = headers();
    h.set(RPC_OUTCOME_HEADER, outcome);
    msg.respond(encodeJson(body), { headers: h });
  };

  const subscriptions: Subscription[] = (['referral', 'visit'] as const).map((kind) =>
    nc.subscribe(trackingSubject(prefix, kind), {
      queue: 'events',
      callback: (err, msg) => {
        if (err) {
          log.error('tracking subscription error', { kind, err });
          return;
        }
        // With tracing on, in a consumer span continuing the gateway's request.
        const work = tracingEnabled()
          ? inConsumerBatchSpan('tracking', [msg], () => handle(kind, msg))
          : handle(kind, msg);
        inFlight.add(work);
        void work.finally(() => inFlight.delete(work));
      },
    }),
  );

  return {
    async stop() {
      await Promise.all(subscriptions.map((s) => s.drain().catch(() => {})));
      await Promise.all([...inFlight]);
    },
  };
}
