import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { TestLike } from './platform.ts';

/** One request as a webhook receiver saw it: the raw body bytes, so signatures can be checked on them exactly. */
export interface ReceivedWebhook {
  at: number;
  headers: IncomingHttpHeaders;
  body: string;
  id: string;
  type: string;
}

/**
 * Verifies a received webhook's Standard Webhooks signature with `secret` and answers the parsed payload; throws when
 * the signature does not match. `body` replaces the received body (to check that a tampered body is refused).
 */
export const verifyWebhook = (
  secret: string,
  hook: { body: string; headers: Record<string, unknown> },
  body = hook.body,
) =>
  new Webhook(secret).verify(body, {
    'webhook-id': String(hook.headers['webhook-id']),
    'webhook-timestamp': String(hook.headers['webhook-timestamp']),
    'webhook-signature': String(hook.headers['webhook-signature']),
  });

export type Responder = (req: ReceivedWebhook, n: number, res: ServerResponse) => void | Promise<void>;

/**
 * A real HTTP receiver on 127.0.0.1. `respond` decides each answer (default 200 "ok"); `n` counts requests so far
 * (1-based). Every request is recorded, in arrival order.
 */
export async function startReceiver(t: TestLike, respond: Responder = (_r, _n, res) => void res.end('ok')) {
  const received: ReceivedWebhook[] = [];
  let responder = respond;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let type = '';
      try {
        type = (JSON.parse(body) as { type: string }).type;
      } catch {
        // recorded as is
      }
      const hook: ReceivedWebhook = {
        at: Date.now(),
        headers: req.headers,
        body,
        id: String(req.headers['webhook-id'] ?? ''),
        type,
      };
      received.push(hook);
      void Promise.resolve(responder(hook, received.length, res)).catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    port,
    received,
    setResponder(r: Responder) {
      responder = r;
    },
  };
}
