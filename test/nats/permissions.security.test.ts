import t from 'tap';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  COMMISSIONS_CONSUMER,
  PLATFORM_PAYOUT_SUBJECTS,
  rpcSubject,
  streamName,
  trackingSubject,
} from '@platform/shared/catalogue';
import { startLockedNats } from '../helpers/locked-nats.ts';
import { sleep } from '../helpers/platform.ts';

/**
 * Each process connects as its own NATS user, whose permissions come from the catalogue (shared/src/nats-access.ts):
 * a nats-server with that authorization refuses a client without a user, and holds each user to its subjects. The
 * test's `admin` connection listens where a refused message would have gone, so a refusal is seen as nothing
 * arriving, not only as the client's error.
 */
const nats = await startLockedNats(t);
const { prefix, admin } = nats;

/** How many messages reach `subject` (seen by the admin) when `nc` publishes one there. */
async function delivered(nc: NatsConnection, subject: string): Promise<number> {
  const sub = admin.subscribe(subject);
  await admin.flush();
  let count = 0;
  void (async () => {
    for await (const _ of sub) count++;
  })();
  nc.publish(subject, 'x');
  await nc.flush().catch(() => {});
  await sleep(200);
  sub.unsubscribe();
  return count;
}

/**
 * Whether a subscription of `nc` to `subject` receives what the admin publishes on `publishedOn` (by default the
 * subject itself), and the error it ended with.
 */
async function subscribed(
  nc: NatsConnection,
  subject: string,
  publishedOn = subject,
): Promise<{ received: number; error: Error | null }> {
  const seen = { received: 0, error: null as Error | null };
  nc.subscribe(subject, {
    callback: (err) => {
      if (err) seen.error = err;
      else seen.received++;
    },
  });
  await nc.flush().catch(() => {});
  await sleep(100);
  admin.publish(publishedOn, 'x');
  await admin.flush();
  await sleep(200);
  return seen;
}

t.test('a connection without a user, or with a wrong password, is refused', async (t) => {
  await t.rejects(nats.connectAs({}), /authorization/i);
  await t.rejects(nats.connectAs({ user: nats.credentials.gateway.user, pass: 'not-the-password' }), /authorization/i);
});

t.test("the gateway's user cannot call the service-to-service payout operations", async (t) => {
  const gateway = await nats.connectAsClient('gateway');
  t.equal(await delivered(gateway, PLATFORM_PAYOUT_SUBJECTS.pay(prefix)), 0, 'affiliate_payout never reaches payments');
  t.equal(await delivered(gateway, PLATFORM_PAYOUT_SUBJECTS.settled(prefix)), 0, 'nor platform_payout_settled');
  await t.rejects(gateway.request(PLATFORM_PAYOUT_SUBJECTS.pay(prefix), '{}', { timeout: 1000 }), /permission/i);
  // What the gateway forwards still goes through, on the same connection.
  t.equal(await delivered(gateway, rpcSubject(prefix, 'payments', 'create_payout')), 1, 'payments API operations');
  t.equal(await delivered(gateway, rpcSubject(prefix, 'affiliates', 'create_affiliate')), 1, 'API operations');
  t.equal(await delivered(gateway, trackingSubject(prefix, 'visit')), 1, 'tracking requests');
  t.equal(await delivered(gateway, `${prefix}.domain.affiliate.created`), 0, 'no domain event');
  t.equal(
    await delivered(gateway, `$JS.API.STREAM.DELETE.${streamName(prefix, 'DOMAIN_EVENTS')}`),
    0,
    'no JetStream API',
  );
});

t.test("the gateway's user cannot subscribe to a service's requests", async (t) => {
  const gateway = await nats.connectAsClient('gateway');
  const affiliates = await subscribed(gateway, rpcSubject(prefix, 'affiliates', 'create_affiliate'));
  t.equal(affiliates.received, 0);
  t.match(affiliates.error?.message, /permissions violation/i);
  const payout = await subscribed(await nats.connectAsClient('gateway'), PLATFORM_PAYOUT_SUBJECTS.pay(prefix));
  t.equal(payout.received, 0);
});

t.test("a service's user reaches only its own subjects", async (t) => {
  const affiliates = await nats.connectAsClient('affiliates');
  t.equal((await subscribed(affiliates, rpcSubject(prefix, 'affiliates', 'list'))).received, 1, 'its own requests');
  const other = await subscribed(await nats.connectAsClient('affiliates'), rpcSubject(prefix, 'payments', 'list'));
  t.equal(other.received, 0, "not another service's");
  t.equal(await delivered(affiliates, PLATFORM_PAYOUT_SUBJECTS.pay(prefix)), 0, 'no payout call');

  const events = await nats.connectAsClient('events');
  const consumer = `${streamName(prefix, COMMISSIONS_CONSUMER.stream)}.${COMMISSIONS_CONSUMER.durable_name}`;
  t.equal(
    await delivered(events, `$JS.API.CONSUMER.MSG.NEXT.${consumer}`),
    0,
    "no pull from the commissions' consumer",
  );
  t.equal(await delivered(events, `${prefix}.webhook.attempt`), 0, "no dispatcher's hint");
  t.equal(await delivered(events, `${prefix}.conversion.recorded`), 1, 'its outbox events');

  const commissions = await nats.connectAsClient('commissions');
  t.equal(await delivered(commissions, PLATFORM_PAYOUT_SUBJECTS.pay(prefix)), 1, 'commissions calls affiliate_payout');
  t.equal(await delivered(commissions, `$JS.API.CONSUMER.MSG.NEXT.${consumer}`), 1, 'and pulls its consumer');
  const payments = await nats.connectAsClient('payments');
  t.equal(await delivered(payments, PLATFORM_PAYOUT_SUBJECTS.settled(prefix)), 1, 'payments reports settlements');
  t.equal(await delivered(payments, PLATFORM_PAYOUT_SUBJECTS.pay(prefix)), 0, 'but calls no payout itself');
});

t.test("each user's replies come to its own inbox, which no other user can read", async (t) => {
  const paymentsInbox = `_INBOX.${nats.credentials.payments.user}`;
  const own = await subscribed(await nats.connectAsClient('payments'), `${paymentsInbox}.*`, `${paymentsInbox}.x`);
  t.equal(own.received, 1, 'payments reads its own inbox');
  const all = await subscribed(await nats.connectAsClient('gateway'), '_INBOX.>', `${paymentsInbox}.x`);
  t.equal(all.received, 0, 'the gateway cannot read every inbox');
  t.match(all.error?.message, /permissions violation/i);
  const other = await subscribed(await nats.connectAsClient('gateway'), `${paymentsInbox}.>`, `${paymentsInbox}.x`);
  t.equal(other.received, 0, "nor payments' inbox");
});
