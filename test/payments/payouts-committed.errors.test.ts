import t from 'tap';
import type Stripe from 'stripe';
import { loadGatewayConfig } from '@platform/gateway/config';
import { startGateway } from '@platform/gateway/service';
import { captureLogger, eventually, startPlatform } from '../helpers/platform.ts';
import { startTcpProxy } from '../helpers/tcp-proxy.ts';
import { holdRows, waitsOnLock } from '../helpers/locks.ts';
import { attachPayments, fundedAccount } from './setup.ts';

// POST /v1/payouts with an Idempotency-Key: the gateway that asked gives up (503) and leaves the claim to the service,
// the service commits the payout, and its reply is then never kept on the claim (it crashed right after COMMIT, or
// its pool stalled). The claim was marked committed in the payout's own transaction, so once its lease passes the
// retry with the key is refused as in progress rather than making a second payout (a second charge). Statement and
// lock timeouts are above the gateway's deadline, so that the gateway gives up first.
const platform = await startPlatform(t, {
  env: { RPC_TIMEOUT_MS: '1500', DATABASE_LOCK_TIMEOUT_MS: '10000', DATABASE_STATEMENT_TIMEOUT_MS: '10000' },
});
const stack = await attachPayments(t, platform, { paymentsEnv: { PAYOUT_RAIL_STEP_MS: '3600000' } });
const { sql } = platform;
const account = await fundedAccount(stack, 10_000);

/** A transaction of the test's own holding the account's balance rows, as a concurrent payout or charge would. */
const holdBalance = () =>
  holdRows(sql, (tx) => tx`select amount from ledger_balances where holder = ${account.id} for update`);

const serviceWaitsOnLock = () => waitsOnLock(sql, 'payments');
const payouts = async () =>
  (await sql<{ id: string }[]>`select id from payment_payouts where holder = ${account.id} order by created_at`).map(
    (r) => r.id,
  );
const available = async () =>
  (await stack.test.balance.retrieve({}, { stripeAccount: account.id })).available[0]!.amount;
const create = (client: Stripe, idempotencyKey: string) =>
  client.payouts.create({ amount: 500, currency: 'usd' }, { stripeAccount: account.id, idempotencyKey });

t.test('a committed payout whose reply was lost: the retry after the lease makes no second payout', async (t) => {
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
  const release = await holdBalance();
  const first = create(stack.stripe(stack.testKey.key, { port: cutOff.port }), 'po-committed').catch(
    (err: unknown) => err,
  );
  await serviceWaitsOnLock();
  proxy.blackhole();
  await release();
  t.equal(((await first) as { statusCode?: number }).statusCode, 503, 'the cut-off gateway answered 503');
  const made = await payouts();
  t.equal(made.length, 1, 'the service made the payout before the deadline');
  const [kept] = await eventually(async () => {
    const rows = await sql<{ committed: boolean; headers: unknown; body: Buffer }[]>`
      select committed_at is not null as committed, reply_headers as headers, reply_body as body
      from idempotency_keys where key = 'po-committed' and reply_headers is not null`;
    return rows.length ? rows : undefined;
  });
  t.ok(kept!.committed, 'the claim was marked committed with the payout');

  // As if the service had stopped right after COMMIT: no reply kept, and the claim's lease over.
  await sql`
    update idempotency_keys set reply_headers = null, reply_body = null, locked_until = now() - interval '1 second'
    where key = 'po-committed'`;
  const retried = await create(stack.test, 'po-committed').catch((err: unknown) => err);
  t.equal((retried as { statusCode?: number }).statusCode, 409, 'the retry is refused as in progress');
  t.equal((retried as { code?: string }).code, 'idempotency_key_in_use');
  t.same(await payouts(), made, 'and makes no second payout');
  t.equal(await available(), before - 500, 'the balance moved once');

  // The reply, once kept (a late keep), answers the retry.
  await sql`
    update idempotency_keys set reply_headers = ${sql.json(kept!.headers as never)}, reply_body = ${kept!.body}
    where key = 'po-committed'`;
  const answered = await create(stack.test, 'po-committed');
  t.equal(answered.id, made[0], 'the payout the first request made');
  t.equal(answered.lastResponse.headers['idempotent-replayed'], 'true');
  t.same(await payouts(), made, 'still one');
});
