import t from 'tap';
import { headers as natsHeaders } from '@nats-io/nats-core';
import { RPC_OUTCOME_HEADER, rpcSubject } from '@platform/shared/catalogue';
import { encodeJson } from '@platform/shared/nats';
import type { PaymentsRpcRequest } from '@platform/shared/payments/rpc';
import type Stripe from 'stripe';
import { loadGatewayConfig } from '@platform/gateway/config';
import { startGateway } from '@platform/gateway/service';
import { captureLogger, eventually, startPlatform } from '../helpers/platform.ts';
import { startTcpProxy } from '../helpers/tcp-proxy.ts';
import { holdRows, waitsOnLock } from '../helpers/locks.ts';
import { attachPayments, fundedAccount } from './setup.ts';

// POST /v1/payouts with an Idempotency-Key while another transaction holds the account's ledger balance row: the
// gateway answers 503 at RPC_TIMEOUT_MS, and the payout must then be made once, whatever the retry with the key meets.
// The services' statement and lock timeouts are set above the gateway's deadline here, so that the gateway gives up
// first and the service's statement goes on once the lock is free (as it does with any lock held long enough).
const platform = await startPlatform(t, {
  env: { RPC_TIMEOUT_MS: '1500', DATABASE_LOCK_TIMEOUT_MS: '10000', DATABASE_STATEMENT_TIMEOUT_MS: '10000' },
});
const stack = await attachPayments(t, platform, { paymentsEnv: { PAYOUT_RAIL_STEP_MS: '3600000' } });
const { sql } = platform;
const account = await fundedAccount(stack, 10_000);

/** A transaction of the test's own holding the account's balance rows, as a concurrent payout or charge would. */
const holdBalance = () =>
  holdRows(sql, (tx) => tx`select amount from ledger_balances where holder = ${account.id} for update`);

/** Resolves once the payments service's statement waits on a lock: the request reached the service. */
const serviceWaitsOnLock = () => waitsOnLock(sql, 'payments');

const payouts = async () =>
  (await sql<{ id: string }[]>`select id from payment_payouts where holder = ${account.id} order by created_at`).map(
    (r) => r.id,
  );
const available = async () =>
  (await stack.test.balance.retrieve({}, { stripeAccount: account.id })).available[0]!.amount;
const create = (client: Stripe, idempotencyKey: string) =>
  client.payouts.create({ amount: 500, currency: 'usd' }, { stripeAccount: account.id, idempotencyKey });
const statusOf = (err: unknown) => (err as { statusCode?: number }).statusCode;

t.test('a 503 at the deadline means not done: the retry with the key makes the payout once', async (t) => {
  const before = await available();
  const release = await holdBalance();
  const first = create(stack.test, 'po-deadline').catch((err: unknown) => err);
  await serviceWaitsOnLock();
  t.equal(statusOf(await first), 503, 'the gateway gave up at RPC_TIMEOUT_MS');
  await release();
  // The service's transaction goes on now that the row is free, and rolls back at its deadline check, before COMMIT;
  // the service gives the key's claim up, so the retry does the work at once rather than after the claim's lease.
  await eventually(async () =>
    (await sql`select 1 from idempotency_keys where key = 'po-deadline'`).length === 0 ? true : undefined,
  );
  t.same(await payouts(), [], 'the first request made no payout');

  const retried = await create(stack.test, 'po-deadline');
  t.same(await payouts(), [retried.id], 'one payout, the one the retry answered');
  const again = await create(stack.test, 'po-deadline');
  t.equal(again.id, retried.id, 'a later retry replays it');
  t.equal(again.lastResponse.headers['idempotent-replayed'], 'true');
  t.equal(await available(), before - 500, 'the balance moved once');
});

t.test('a gateway cut off from the reply: the service keeps it on the key, the retry answers it', async (t) => {
  // A second gateway whose NATS connection goes through a proxy the test blackholes once the request reached the
  // service: the service commits in time and replies, the reply never reaches that gateway (as when it stops).
  const proxy = await startTcpProxy(t, { host: '127.0.0.1', port: Number(new URL(platform.env['NATS_URL']!).port) });
  const cutOff = await startGateway(
    loadGatewayConfig({ ...platform.env, NATS_URL: `nats://127.0.0.1:${proxy.port}` }),
    captureLogger('gateway-cut-off').log,
  );
  t.teardown(async () => {
    await proxy.restore();
    await cutOff.close();
  });
  const before = await available();
  const earlier = new Set(await payouts());
  const release = await holdBalance();
  const first = create(stack.stripe(stack.testKey.key, { port: cutOff.port }), 'po-cut-off').catch(
    (err: unknown) => err,
  );
  await serviceWaitsOnLock();
  proxy.blackhole();
  await release();
  t.equal(statusOf(await first), 503, 'the cut-off gateway answered 503 at RPC_TIMEOUT_MS');
  const made = (await payouts()).filter((id) => !earlier.has(id));
  t.equal(made.length, 1, 'the service made the payout before the deadline');
  const [claim] = await sql<{ status: number | null; kept: boolean }[]>`
    select status, reply_headers is not null as kept from idempotency_keys where key = 'po-cut-off'`;
  t.same(claim, { status: null, kept: true }, 'the key still claimed, with the reply the service kept on it');

  const retried = await create(stack.test, 'po-cut-off');
  t.equal(retried.id, made[0], 'the retry through the other gateway answers the payout made');
  t.equal(retried.lastResponse.headers['idempotent-replayed'], 'true');
  t.same(
    (await payouts()).filter((id) => !earlier.has(id)),
    made,
    'and makes no other',
  );
  const again = await create(stack.test, 'po-cut-off');
  t.equal(again.id, made[0], 'the answer is stored: later retries replay it');
  t.equal(await available(), before - 500, 'the balance moved once');
});

t.test('a request that reaches the service past its deadline does nothing and gives its claim up', async (t) => {
  // As the gateway leaves it after its 503: the key claimed by the request, whose outcome it did not see.
  await sql`
    insert into idempotency_keys (owner, key, fingerprint, request_id, locked_until)
    values (${stack.testKey.id}, 'po-expired', '\\x00', 'req_expired', now() + interval '1 minute')`;
  const before = await payouts();
  const request: PaymentsRpcRequest = {
    request_id: 'req_expired',
    deadline: Date.now() - 1,
    key_id: stack.testKey.id,
    livemode: false,
    account: account.id,
    path: {},
    params: { amount: 500, currency: 'usd' },
    idempotency: { owner: stack.testKey.id, key: 'po-expired' },
  };
  platform.nc.publish(rpcSubject(platform.prefix, 'payments', 'create_payout'), encodeJson(request));
  await eventually(async () =>
    (await sql`select 1 from idempotency_keys where key = 'po-expired'`).length === 0 ? true : undefined,
  );
  t.pass('the claim was given up: a retry with the key does the work at once');
  t.same(await payouts(), before, 'no payout');
});

t.test('a 500 from the payments service is not stored: the retry with the key asks the service again', async (t) => {
  // Last: the service stops, and a stand-in answers every payout as a bug of the service would.
  await stack.payments.close();
  let asked = 0;
  const sub = platform.nc.subscribe(rpcSubject(platform.prefix, 'payments', 'create_payout'), {
    callback: (_err, msg) => {
      asked++;
      const h = natsHeaders();
      h.set(RPC_OUTCOME_HEADER, 'error');
      msg.respond(
        new TextEncoder().encode(
          JSON.stringify({ status: 500, error: { type: 'api_error', message: 'Something went wrong on our side' } }),
        ),
        { headers: h },
      );
    },
  });
  t.teardown(() => sub.unsubscribe());
  await platform.nc.flush();
  const first = await create(stack.test, 'po-broken').catch((err: unknown) => err);
  t.equal(statusOf(first), 500);
  t.same(await sql`select 1 from idempotency_keys where key = 'po-broken'`, [], 'the key was released');
  const again = await create(stack.test, 'po-broken').catch((err: unknown) => err);
  t.equal(statusOf(again), 500, 'not a replay: the service was asked again');
  t.equal((again as { headers?: Record<string, string> }).headers?.['idempotent-replayed'], undefined);
  t.equal(asked, 2);
});
