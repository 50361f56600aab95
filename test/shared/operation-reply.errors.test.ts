import t from 'tap';
import { randomBytes } from 'node:crypto';
import { headers as natsHeaders } from '@nats-io/nats-core';
import { api } from '@platform/shared/api';
import { RPC_OUTCOME_HEADER, rpcSubject } from '@platform/shared/catalogue';
import { connectNats, decodeJson, encodeJson } from '@platform/shared/nats';
import { defineOperation, serveOperations } from '@platform/shared/operation';
import { Registry } from 'prom-client';
import { captureLogger, createTestDatabase, createTestNats, NATS_URL } from '../helpers/platform.ts';

/**
 * `respond` used to throw when a reply could not be sent (larger than NATS's max_payload: a payout with every
 * commission id), from a setImmediate: uncaught, the service process exited, with the other answers of that turn.
 * Now such a reply is logged and answered with the INTERNAL error envelope, and the answers beside it still go.
 */
const db = await createTestDatabase(t, { migrated: false });
const bus = await createTestNats(t);
const service = await connectNats(NATS_URL, 'reply-test');
t.teardown(() => service.close());

const logger = captureLogger('commissions');
// Every option serveOperations reads, the encryption key of kept Idempotency-Key replies included.
const options = {
  nc: service,
  sql: db.sql,
  prefix: bus.prefix,
  log: logger.log,
  registry: new Registry(),
  encryptionKey: randomBytes(32),
  operations: [
    // Larger than the server's max_payload (1 MiB by default) once encoded.
    defineOperation(api.getPayout, async () => ({ outcome: 'ok', body: { padding: 'x'.repeat(2 * 1024 * 1024) } })),
    defineOperation(api.getCommission, async (_ctx, { params }) => ({
      outcome: 'ok',
      body: { id: params.commission_id },
    })),
  ],
};
const serving = serveOperations(options);
t.teardown(() => serving.drain());
// The subscriptions reach the server with the service connection's next flush; asked before, nobody responds.
await service.flush();

const ask = (operation: 'getPayout' | 'getCommission', params: Record<string, string>) => {
  const spec = api[operation];
  // What the gateway sends (catalogue.ts RpcRequest).
  const request = {
    request_id: `req_${randomBytes(6).toString('hex')}`,
    merchant_id: 'mer_test',
    key_id: 'key_test',
    deadline: Date.now() + 5000,
    params,
    query: {},
    body: undefined,
  };
  return bus.nc.request(rpcSubject(bus.prefix, spec.service, spec.name), encodeJson(request), {
    timeout: 5000,
    headers: natsHeaders(),
  });
};
const logged = (msg: string) =>
  logger.lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === msg);

t.test('a reply too large to send answers INTERNAL in the envelope; the answers beside it still go', async (t) => {
  const [large, small] = await Promise.all([
    ask('getPayout', { payout_id: 'po_large' }),
    ask('getCommission', { commission_id: 'com_small' }),
  ]);
  t.equal(large.headers?.get(RPC_OUTCOME_HEADER), 'error');
  t.same(decodeJson(large.data), { code: 'INTERNAL', message: 'Something went wrong on our side' });
  t.equal(small.headers?.get(RPC_OUTCOME_HEADER), 'ok', 'the answer sent in the same turn');
  t.same(decodeJson(small.data), { id: 'com_small' });
  t.match(logged('reply could not be sent; answering INTERNAL'), [
    { level: 'error', operation: 'getPayout', err: { message: /max_payload/ } },
  ]);
  const again = await ask('getCommission', { commission_id: 'com_after' });
  t.same(decodeJson(again.data), { id: 'com_after' }, 'the service goes on answering');
});
