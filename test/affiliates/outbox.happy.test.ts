import t, { type Test } from 'tap';
import { domainEventSubject, streamName, type DomainEventType } from '@platform/shared/catalogue';
import { isId } from '@platform/shared/ids';
import { eventually, startPlatform, spawnService, type Platform } from '../helpers/platform.ts';
import { readStream, streamMessageCount, type StreamMessage } from '../helpers/stream.ts';

/**
 * Affiliate changes reach the domain-event stream through the transactional outbox: after the commit, exactly once
 * (JetStream de-duplicates on Nats-Msg-Id = envelope id), never for a refused change, and even when the process
 * that committed dies before publishing.
 */
const platform = await startPlatform(t);
const merchant = await platform.merchant();

const ENVELOPE_KEYS = ['created_at', 'data', 'id', 'merchant_id', 'type'];
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const domainStream = (p: Platform) => streamName(p.prefix, 'DOMAIN_EVENTS');
const messagesAbout = async (p: Platform, affiliateId: string): Promise<StreamMessage[]> =>
  (await readStream(p.nc, domainStream(p))).filter((m) => (m.envelope.data as { id?: string }).id === affiliateId);

async function outboxRows(p: Platform, affiliateId: string) {
  return p.sql<{ id: string; type: string; merchant_id: string; created_at: Date; published_at: Date | null }[]>`
    select id, type, merchant_id, created_at, published_at from outbox where data->>'id' = ${affiliateId} order by seq`;
}

/** Checks one stream message against the outbox row it came from and the affiliate the API returned. */
async function checkEnvelope(
  t: Test,
  p: Platform,
  m: StreamMessage,
  type: DomainEventType,
  merchantId: string,
  data: unknown,
) {
  t.equal(m.subject, domainEventSubject(p.prefix, type), `subject of ${type}`);
  t.strictSame(Object.keys(m.envelope).sort(), ENVELOPE_KEYS, 'envelope fields');
  t.ok(isId('msg', m.envelope.id), `envelope id ${m.envelope.id} is a msg_ id`);
  t.equal(m.msgId, m.envelope.id, 'Nats-Msg-Id is the envelope id');
  t.equal(m.envelope.type, type);
  t.match(m.envelope.created_at, ISO_MS);
  t.equal(m.envelope.merchant_id, merchantId);
  t.strictSame(m.envelope.data, data, 'data is the public affiliate, as the API returned it');
  const [row] = await p.sql<{ type: string; merchant_id: string; created_at: Date }[]>`
    select type, merchant_id, created_at from outbox where id = ${m.envelope.id}`;
  t.ok(row, 'the message comes from an outbox row');
  t.equal(row!.type, type);
  t.equal(row!.created_at.toISOString(), m.envelope.created_at, 'created_at is the outbox row time');
  // The relay marks the row in the transaction that claimed it, committed just after the publish.
  const marked = await eventually(
    async () => {
      const [r] = await p.sql<
        { published_at: Date | null }[]
      >`select published_at from outbox where id = ${m.envelope.id}`;
      return r?.published_at ?? undefined;
    },
    10_000,
    'the row to be marked published',
  );
  t.ok(marked, 'the row is marked published');
}

t.test('affiliate.created, .suspended and .approved are published with the envelope', async (t) => {
  const created = await merchant.client.post('/api/v1/affiliates', { email: 'events@example.com' });
  t.equal(created.status, 201);
  const id = created.body.id as string;
  const [onCreate] = await eventually(
    async () => {
      const ms = await messagesAbout(platform, id);
      return ms.length ? ms : undefined;
    },
    10_000,
    'affiliate.created on the stream',
  );
  await checkEnvelope(t, platform, onCreate!, 'affiliate.created', merchant.id, created.body);

  const suspended = await merchant.client.patch(`/api/v1/affiliates/${id}`, { status: 'suspended' });
  t.equal(suspended.status, 200);
  const approved = await merchant.client.patch(`/api/v1/affiliates/${id}`, { status: 'approved' });
  t.equal(approved.status, 200);
  const all = await eventually(
    async () => {
      const ms = await messagesAbout(platform, id);
      return ms.length >= 3 ? ms : undefined;
    },
    10_000,
    'three events',
  );
  await platform.affiliates.relay!.flush();
  const final = await messagesAbout(platform, id);
  t.same(
    final.map((m) => m.envelope.type),
    ['affiliate.created', 'affiliate.suspended', 'affiliate.approved'],
    'in order, once each',
  );
  t.equal(all.length, 3);
  await checkEnvelope(t, platform, final[1]!, 'affiliate.suspended', merchant.id, suspended.body);
  await checkEnvelope(t, platform, final[2]!, 'affiliate.approved', merchant.id, approved.body);

  // pending → approved is an approval too; pending → suspended a suspension.
  const pending = await merchant.client.post('/api/v1/affiliates', { email: 'waiting@example.com', status: 'pending' });
  const approval = await merchant.client.patch(`/api/v1/affiliates/${pending.body.id}`, { status: 'approved' });
  const pending2 = await merchant.client.post('/api/v1/affiliates', {
    email: 'waiting2@example.com',
    status: 'pending',
  });
  const suspension = await merchant.client.patch(`/api/v1/affiliates/${pending2.body.id}`, { status: 'suspended' });
  await platform.affiliates.relay!.flush();
  const first = await messagesAbout(platform, pending.body.id);
  t.same(
    first.map((m) => m.envelope.type),
    ['affiliate.created', 'affiliate.approved'],
  );
  await checkEnvelope(t, platform, first[1]!, 'affiliate.approved', merchant.id, approval.body);
  const second = await messagesAbout(platform, pending2.body.id);
  t.same(
    second.map((m) => m.envelope.type),
    ['affiliate.created', 'affiliate.suspended'],
  );
  await checkEnvelope(t, platform, second[1]!, 'affiliate.suspended', merchant.id, suspension.body);
});

t.test('a refused change publishes nothing', async (t) => {
  const created = await merchant.client.post('/api/v1/affiliates', { email: 'steady@example.com', slug: 'steady' });
  const id = created.body.id as string;
  await platform.affiliates.relay!.flush();
  t.equal((await messagesAbout(platform, id)).length, 1, 'created once');
  const outboxBefore = (await platform.sql<{ n: number }[]>`select count(*)::int as n from outbox`)[0]!.n;
  const streamBefore = await streamMessageCount(platform.nc, domainStream(platform));

  t.equal(
    (await merchant.client.patch(`/api/v1/affiliates/${id}`, { status: 'pending' })).status,
    409,
    'approved → pending refused',
  );
  t.equal(
    (await merchant.client.patch(`/api/v1/affiliates/${id}`, { status: 'suspended', tier_id: 'tier_nope' })).status,
    400,
    'a move with a bad tier is refused whole',
  );
  t.equal(
    (await merchant.client.patch(`/api/v1/affiliates/${id}`, { status: 'approved' })).status,
    200,
    'staying approved: no move',
  );
  t.equal(
    (await merchant.client.patch(`/api/v1/affiliates/${id}`, { display_name: 'Renamed' })).status,
    200,
    'a rename is no status event',
  );
  t.equal(
    (await merchant.client.post('/api/v1/affiliates', { email: 'STEADY@example.com' })).status,
    409,
    'duplicate e-mail',
  );
  t.equal(
    (await merchant.client.post('/api/v1/affiliates', { email: 'other@example.com', slug: 'steady' })).status,
    409,
    'duplicate slug',
  );
  t.equal(
    (await merchant.client.post('/api/v1/affiliates', { email: 'kid@example.com', parent_email: 'none@example.com' }))
      .status,
    400,
    'unknown parent',
  );

  await platform.affiliates.relay!.flush();
  t.equal(
    (await platform.sql<{ n: number }[]>`select count(*)::int as n from outbox`)[0]!.n,
    outboxBefore,
    'no outbox row',
  );
  t.equal(await streamMessageCount(platform.nc, domainStream(platform)), streamBefore, 'no message on the stream');
  t.same(
    (await messagesAbout(platform, id)).map((m) => m.envelope.type),
    ['affiliate.created'],
  );
  t.equal(
    (await platform.sql`select 1 from affiliates where lower(email) = 'other@example.com' or email = 'kid@example.com'`)
      .length,
    0,
    'and no row',
  );
});

t.test('published, then a crash before marking: re-published, stored once', async (t) => {
  const created = await merchant.client.post('/api/v1/affiliates', { email: 'twice@example.com' });
  const id = created.body.id as string;
  const [row] = await eventually(
    async () => {
      const rows = await outboxRows(platform, id);
      return rows[0]?.published_at ? rows : undefined;
    },
    10_000,
    'the outbox row to be published',
  );
  const before = await streamMessageCount(platform.nc, domainStream(platform));
  t.equal((await messagesAbout(platform, id)).length, 1);

  // The relay published and died before its UPDATE committed: the row is pending again.
  await platform.sql`update outbox set published_at = null where id = ${row!.id}`;
  await platform.affiliates.relay!.flush();
  const [after] = await outboxRows(platform, id);
  t.ok(after!.published_at, 'marked published this time');
  t.ok(after!.published_at!.getTime() > row!.published_at!.getTime(), 'by a second publication');

  t.equal(await streamMessageCount(platform.nc, domainStream(platform)), before, 'the stream did not grow');
  const ms = await messagesAbout(platform, id);
  t.equal(ms.length, 1, 'one message for the affiliate');
  t.equal(ms[0]!.envelope.id, row!.id);
  t.equal(ms[0]!.msgId, row!.id);
});

t.test('the service dies after the commit and before publishing: the event is published once on restart', async (t) => {
  const p = await startPlatform(t);
  // Only the separate process answers the gateway from here on.
  await p.affiliates.close();
  const m = await p.merchant();

  const first = await spawnService(t, 'affiliates', { ...p.env, OUTBOX_RELAY: 'false' });
  const ids: string[] = [];
  for (const email of ['crash1@example.com', 'crash2@example.com', 'crash3@example.com']) {
    const res = await m.client.post('/api/v1/affiliates', { email });
    t.equal(res.status, 201, `${email} committed`);
    ids.push(res.body.id);
  }
  const suspended = await m.client.patch(`/api/v1/affiliates/${ids[0]}`, { status: 'suspended' });
  t.equal(suspended.status, 200);
  const pending = await p.sql`select id from outbox where merchant_id = ${m.id} and published_at is null`;
  t.equal(pending.length, 4, 'four events committed, none published');

  first.child.kill('SIGKILL');
  await first.exited;
  t.equal(first.child.signalCode, 'SIGKILL', 'killed');
  t.equal(await streamMessageCount(p.nc, domainStream(p)), 0, 'nothing reached the stream');

  const second = await spawnService(t, 'affiliates', { ...p.env, OUTBOX_RELAY: 'true' });
  await eventually(
    async () => {
      const [r] = await p.sql<{ n: number }[]>`select count(*)::int as n from outbox where published_at is null`;
      return r!.n === 0 ? true : undefined;
    },
    15_000,
    'the restarted relay to publish',
  );

  const outbox = await p.sql<
    { id: string; type: string; data: { id: string } }[]
  >`select id, type, data from outbox order by seq`;
  const messages = await readStream(p.nc, domainStream(p));
  t.equal(messages.length, 4, 'four messages');
  t.same(
    messages.map((msg) => [msg.msgId, msg.envelope.id, msg.envelope.type, (msg.envelope.data as { id: string }).id]),
    outbox.map((r) => [r.id, r.id, r.type, r.data.id]),
    'each outbox row exactly once, in commit order, Nats-Msg-Id = envelope id',
  );
  for (const id of ids) {
    const about = messages.filter(
      (msg) => (msg.envelope.data as { id: string }).id === id && msg.envelope.type === 'affiliate.created',
    );
    t.equal(about.length, 1, `affiliate.created for ${id} once`);
    t.equal(about[0]!.subject, domainEventSubject(p.prefix, 'affiliate.created'));
  }
  const ofSuspension = messages.filter((msg) => msg.envelope.type === 'affiliate.suspended');
  t.equal(ofSuspension.length, 1);
  t.strictSame(ofSuspension[0]!.envelope.data, suspended.body);

  // And the restarted service keeps answering and publishing.
  const later = await m.client.post('/api/v1/affiliates', { email: 'after-restart@example.com' });
  t.equal(later.status, 201);
  const published = await eventually(
    async () => {
      const ms = await messagesAbout(p, later.body.id);
      return ms.length ? ms : undefined;
    },
    10_000,
    'the event of the restarted service',
  );
  t.equal(published.length, 1);
  second.child.kill('SIGTERM');
  t.equal(await second.exited, 0, 'the restarted service stops cleanly');
});
