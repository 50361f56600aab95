import type { NatsConnection } from '@nats-io/transport-node';
import type { Registry } from 'prom-client';
import {
  trackingSubject,
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
import { serveRequests, type Route } from '@platform/shared/request-server';
import type { Worker } from '@platform/shared/service';
import { TrackVisitBody, type TrackedVisit } from '@platform/shared/schemas/tracking';
import { compileValidator } from '@platform/shared/validation';
import { findMerchant, findMerchantByTrackingHost, type MerchantWithSettings } from './queries/merchants.ts';
import { landingUrlFor } from './domain/visits.ts';
import { recordVisit } from './record-visit.ts';

const SLUG = /^[a-z0-9][a-z0-9-]{1,62}$/;
const HOST = /^[a-z0-9.-]{1,253}$/i;

interface Answer {
  outcome: Extract<RpcOutcome, 'ok' | 'created'>;
  body: TrackedVisit | TrackReferralReply;
}

/**
 * Answers the gateway's public tracking requests (catalogue: trackingSubject): referral-link clicks and the
 * tracking script's visits, through the request server (request-server.ts). Queue group "events", so each request is
 * handled by one replica. The visitor's IP and user agent arrive here but are never logged; only the IP's HMAC is
 * stored.
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
      // The request's Referer is the merchant's page the script runs on; where the visitor came from is the page's.
      client: { ...request.client, referrer: body.referrer ?? null },
      fingerprint: body.fingerprint ?? null,
      landingUrl: body.landing_url ?? null,
    });
    return {
      outcome: visit.reused ? 'ok' : 'created',
      body: { visit_id: visit.visit_id, max_age_seconds: visit.max_age_seconds },
    };
  };

  // Each answer is logged at debug level with its visit; the visitor's IP and user agent never are.
  const route = <R extends TrackReferralRequest | TrackVisitRequest>(
    kind: TrackingOperation,
    answer: (request: R) => Promise<Answer>,
  ): Route<R> => ({
    subject: trackingSubject(prefix, kind),
    queue: 'events',
    name: kind,
    async run(request, log) {
      const reply = await answer(request);
      log.debug('referral visit', { visit_id: reply.body.visit_id, outcome: reply.outcome });
      return reply;
    },
  });
  return serveRequests({
    nc,
    routes: [route('referral', referral), route('visit', scriptVisit)],
    log,
    registry: opts.registry,
    metrics: {
      label: 'kind',
      total: {
        name: 'tracking_requests_total',
        help: 'Referral clicks and script visits handled, by kind and result code',
      },
      duration: { name: 'tracking_request_duration_seconds', help: 'Time to handle a referral click or script visit' },
    },
  });
}
