import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import type { TestLike } from './platform.ts';

/** An OTLP attribute value as the JSON protocol encodes it. */
type OtlpValue = {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpValue[] };
};
type OtlpAttribute = { key: string; value: OtlpValue };

/** One exported span, flattened: its service (from the resource), ids in hex, attributes as plain values. */
export interface ReceivedSpan {
  service: string;
  resource: Record<string, unknown>;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, unknown>;
  events: { name: string; attributes: Record<string, unknown> }[];
  links: { traceId: string; spanId: string }[];
  status: { code?: number; message?: string };
  /** The span as received, for searching every field. */
  raw: unknown;
}

export const SPAN_KIND = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 } as const;

const valueOf = (v: OtlpValue): unknown => {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(valueOf);
  return null;
};
const attributesOf = (list: OtlpAttribute[] | undefined) =>
  Object.fromEntries((list ?? []).map((a) => [a.key, valueOf(a.value)]));

/**
 * A collector's OTLP/HTTP traces endpoint with the JSON protocol (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`) on
 * 127.0.0.1: every span posted to `/v1/traces` is kept, flattened. `endpoint` is the base URL for
 * OTEL_EXPORTER_OTLP_ENDPOINT. Anything else it is sent is answered 415 or 404 and counted in `refused`.
 */
export async function startOtlpReceiver(t: TestLike) {
  const spans: ReceivedSpan[] = [];
  const refused: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        refused.push(`${req.method} ${req.url}`);
        res.writeHead(404).end();
        return;
      }
      if (!String(req.headers['content-type']).startsWith('application/json')) {
        refused.push(`content-type ${req.headers['content-type']}`);
        res.writeHead(415).end();
        return;
      }
      let body = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
      const request = JSON.parse(body.toString('utf8')) as {
        resourceSpans?: {
          resource?: { attributes?: OtlpAttribute[] };
          scopeSpans?: { spans?: Record<string, any>[] }[];
        }[];
      };
      for (const rs of request.resourceSpans ?? []) {
        const resource = attributesOf(rs.resource?.attributes);
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({
              service: String(resource['service.name']),
              resource,
              traceId: s['traceId'],
              spanId: s['spanId'],
              parentSpanId: s['parentSpanId'] ?? '',
              name: s['name'],
              kind: s['kind'],
              attributes: attributesOf(s['attributes']),
              events: (s['events'] ?? []).map((e: { name: string; attributes?: OtlpAttribute[] }) => ({
                name: e.name,
                attributes: attributesOf(e.attributes),
              })),
              links: (s['links'] ?? []).map((l: { traceId: string; spanId: string }) => ({
                traceId: l.traceId,
                spanId: l.spanId,
              })),
              status: s['status'] ?? {},
              raw: s,
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as AddressInfo;
  return { endpoint: `http://127.0.0.1:${port}`, spans, refused };
}
