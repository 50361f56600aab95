import { request as httpRequest } from 'node:http';
import type { Sql } from '@platform/shared/db';
import { encryptionKey } from '@platform/shared/config';
import { createHmacKey } from '@platform/shared/crypto';
import { streamName } from '@platform/shared/catalogue';
import { loadEventsConfig } from '@platform/events/config';
import { startEventsService } from '@platform/events/service';
import type { ServiceRuntime } from '@platform/shared/service';
import type { ApiClient } from '../helpers/client.ts';
import { captureLogger, startPlatform, type Platform, type TestLike } from '../helpers/platform.ts';
import { readStream, type StreamMessage } from '../helpers/stream.ts';

/** The platform plus the events service in this process, with the events service's log lines kept. */
export async function startWithEvents(
  t: TestLike,
  opts: Parameters<typeof startPlatform>[1] = {},
): Promise<{ platform: Platform; events: ServiceRuntime; eventsLogs: string[]; ipHashKey: Buffer }> {
  const platform = await startPlatform(t, opts);
  const captured = captureLogger('events');
  const config = loadEventsConfig({ ...platform.env });
  const events = await startEventsService(config, captured.log);
  t.teardown(() => events.close());
  return { platform, events, eventsLogs: captured.lines, ipHashKey: createHmacKey(encryptionKey(config), 'ip-hash') };
}

export async function setSettings(sql: Sql, merchantId: string, patch: Record<string, unknown>): Promise<void> {
  await sql`update merchants set settings = settings || ${sql.json(patch as never)} where id = ${merchantId}`;
}

export async function createAffiliate(
  client: ApiClient,
  email: string,
  extra: Record<string, unknown> = {},
): Promise<{ id: string; slug: string }> {
  const res = await client.post('/api/v1/affiliates', { email, ...extra });
  if (res.status !== 201) throw new Error(`creating affiliate ${email}: ${res.status} ${res.text}`);
  return res.body;
}

export async function createCoupon(
  client: ApiClient,
  affiliateId: string,
  code: string,
): Promise<{ id: string; code: string }> {
  const res = await client.post('/api/v1/coupons', { affiliate_id: affiliateId, code });
  if (res.status !== 201) throw new Error(`creating coupon ${code}: ${res.status} ${res.text}`);
  return res.body;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** The body of a raw response, parsed as JSON. */
export const rawJson = (res: RawResponse) => JSON.parse(res.text) as Record<string, any>;

/**
 * A plain HTTP request with full control of the headers (Host, Cookie, X-Forwarded-*), as a browser following a
 * referral link would send it; redirects are not followed.
 */
export function rawRequest(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<RawResponse> {
  const url = new URL(path, baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method,
        path: url.pathname + url.search,
        headers: { ...headers, ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The _svc_sess Set-Cookie line of a response, split into its value and attributes. */
export function visitCookie(res: RawResponse): { value: string; attributes: string[] } {
  const lines = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
  const line = lines.find((l) => l.startsWith('_svc_sess='));
  if (!line) throw new Error(`no _svc_sess cookie in ${JSON.stringify(lines)}`);
  const [pair, ...attributes] = line.split(/;\s*/);
  return { value: pair!.slice('_svc_sess='.length), attributes };
}

/** Follows /r/{merchant_id}/{slug} like a browser and answers the visit id its cookie carries. */
export async function clickReferralLink(
  baseUrl: string,
  merchantId: string,
  slug: string,
  headers: Record<string, string> = {},
): Promise<string> {
  const res = await rawRequest(baseUrl, 'GET', `/r/${merchantId}/${slug}`, headers);
  if (res.status !== 302) throw new Error(`referral link answered ${res.status}: ${res.text}`);
  return visitCookie(res).value;
}

/** The conversion.recorded messages on the CONVERSIONS stream. */
export async function conversionMessages(platform: Platform): Promise<StreamMessage[]> {
  return readStream(platform.nc, streamName(platform.prefix, 'CONVERSIONS'));
}
