import type { AddressInfo } from 'node:net';
import express from 'express';

/**
 * The baseline of `npm run bench`: a bare express 5 server, in a process of its own, that answers
 * GET /api/v1/affiliates with a page of affiliates held in memory (the bytes the real API returned for limit=25)
 * and POST /api/v1/affiliates (and POST /api/v1/events, the baseline of bench/events.ts) by parsing the JSON body and
 * echoing it with 201. No auth, no database, no NATS:
 * the cost of Node's HTTP stack plus express routing and JSON, which the gateway pays too.
 *
 * Started by bench/run.ts with an IPC channel: it waits for { page } and answers { port } once listening.
 */

interface PageMessage {
  page: string;
}

if (!process.send) {
  process.stderr.write('bench/bare-express.ts is started by bench/run.ts (it needs an IPC channel)\n');
  process.exit(2);
}

process.once('message', (message: PageMessage) => {
  const page = Buffer.from(message.page);
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.get('/api/v1/affiliates', (_req, res) => {
    res.type('application/json').send(page);
  });
  app.post('/api/v1/affiliates', express.json({ limit: '1mb' }), (req, res) => {
    res.status(201).json(req.body);
  });
  app.post('/api/v1/events', express.json({ limit: '1mb' }), (req, res) => {
    res.status(201).json(req.body);
  });
  // The baseline of bench/payments.ts: Stripe's form encoding, parsed (bracket notation) and echoed.
  app.post('/v1/payment_intents', express.urlencoded({ extended: true, limit: '1mb' }), (req, res) => {
    res.json(req.body);
  });
  const server = app.listen(0, '127.0.0.1', () => {
    server.keepAliveTimeout = 65_000;
    process.send!({ port: (server.address() as AddressInfo).port });
  });
  // The parent closes the channel (or dies): stop with it.
  process.once('disconnect', () => process.exit(0));
  process.once('SIGTERM', () => process.exit(0));
});
