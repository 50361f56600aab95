import { randomBytes } from 'node:crypto';
import t, { type Test } from 'tap';
import { streamName } from '@platform/shared/catalogue';
import type { ApiResponse } from '../helpers/client.ts';
import { startPlatform } from '../helpers/platform.ts';
import { readStream } from '../helpers/stream.ts';

/**
 * Tenant isolation (another merchant's affiliate does not exist for you) and the vault references
 * (tin_vault_id, fingerprint_visitor_ids, payout_details_vault_id), which leave the service nowhere:
 * not in responses, not in domain events, not in the outbox, not in logs.
 */
const platform = await startPlatform(t);
const mine = await platform.merchant({ plan: 'scale', rateLimit: 60000 });
const theirs = await platform.merchant();

const PUBLIC_FIELDS = [
  'created_at',
  'custom_commission_rate',
  'display_name',
  'email',
  'id',
  'lifetime_commissions_paid',
  'parent_id',
  'referral_url',
  'slug',
  'status',
  'tier_id',
  'updated_at',
];

const expectNotFound = (t: Test, res: ApiResponse) => {
  t.equal(res.status, 404);
  t.strictSame(res.body, {
    error: { code: 'NOT_FOUND', message: 'No such affiliate', request_id: res.headers.get('x-request-id') },
  });
};

async function listAll(client: typeof mine.client, query = ''): Promise<{ id: string }[]> {
  const all: { id: string }[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 50; page++) {
    const res: ApiResponse = await client.get(
      `/api/v1/affiliates?limit=10${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    if (res.status !== 200) throw new Error(`list failed: ${res.status} ${res.text}`);
    all.push(...res.body.data);
    cursor = res.body.next_cursor;
    if (!cursor) return all;
  }
  throw new Error('list did not end');
}

t.test("another merchant's affiliate does not exist for you", async (t) => {
  const ownIds: string[] = [];
  for (const [i, status] of (['approved', 'pending', 'suspended', 'approved'] as const).entries()) {
    const res = await mine.client.post('/api/v1/affiliates', { email: `own${i}@example.com`, status });
    t.equal(res.status, 201);
    ownIds.push(res.body.id);
  }
  const foreign: Record<string, { id: string; updated_at: string }> = {};
  for (const status of ['approved', 'pending', 'suspended'] as const) {
    // Same e-mail and slug as one of mine: nothing of theirs may be found through them either.
    const res = await theirs.client.post('/api/v1/affiliates', { email: `${status}-foreign@example.com`, status });
    t.equal(res.status, 201);
    foreign[status] = res.body;
  }
  const foreignIds = Object.values(foreign).map((a) => a.id);

  for (const id of foreignIds) {
    expectNotFound(t, await mine.client.get(`/api/v1/affiliates/${id}`));
    expectNotFound(t, await mine.client.patch(`/api/v1/affiliates/${id}`, { status: 'suspended' }));
    expectNotFound(
      t,
      await mine.client.patch(`/api/v1/affiliates/${id}`, { status: 'approved', display_name: 'Hijacked' }),
    );
    expectNotFound(t, await mine.client.patch(`/api/v1/affiliates/${id}`, { custom_commission_rate: 1 }));
    // The owner still sees it, unchanged.
    const owned = await theirs.client.get(`/api/v1/affiliates/${id}`);
    t.equal(owned.status, 200);
    t.same(
      owned.body,
      Object.values(foreign).find((a) => a.id === id),
      'unchanged by the other merchant',
    );
  }
  // The 404 of a foreign id is the 404 of an id that never existed: same body apart from the request id.
  const unknown = await mine.client.get('/api/v1/affiliates/aff_00000000000000000000000000');
  const foreignGet = await mine.client.get(`/api/v1/affiliates/${foreignIds[0]}`);
  t.same({ ...unknown.body.error, request_id: 'x' }, { ...foreignGet.body.error, request_id: 'x' });

  for (const query of ['', '&status=approved', '&status=pending', '&status=suspended']) {
    const listed = (await listAll(mine.client, query)).map((a) => a.id);
    for (const id of foreignIds) t.notOk(listed.includes(id), `foreign ${id} absent from list${query}`);
    const rows = await platform.sql<{ id: string }[]>`
      select id from affiliates where merchant_id = ${mine.id}
      ${query ? platform.sql`and status = ${query.split('=')[1]!}` : platform.sql``}`;
    t.same(new Set(listed), new Set(rows.map((r) => r.id)), `list${query} is exactly my affiliates`);
    t.ok(listed.length > 0, 'the list is not trivially empty');
  }
  const theirList = (await listAll(theirs.client)).map((a) => a.id);
  for (const id of ownIds) t.notOk(theirList.includes(id), 'and the other way round');

  // The refused PATCHes wrote nothing: no change, no event.
  const [events] = await platform.sql<{ n: number }[]>`
    select count(*)::int as n from outbox where data->>'id' = any(${foreignIds}) and type <> 'affiliate.created'`;
  t.equal(events!.n, 0, 'no event for the foreign affiliates');
  const [row] = await platform.sql<{ status: string; display_name: string; custom_commission_rate: string | null }[]>`
    select status, display_name, custom_commission_rate from affiliates where id = ${foreign['approved']!.id}`;
  t.strictSame({ ...row }, { status: 'approved', display_name: 'Approved Foreign', custom_commission_rate: null });
});

t.test('vault references leave the service nowhere', async (t) => {
  const marker = randomBytes(8).toString('hex');
  const vault = {
    tin: `tinvault_${marker}_default`,
    fingerprint: `fpvisitor_${marker}_default`,
    payout: `payoutvault_${marker}_default`,
  };
  const special = {
    tin: `tinvault_${marker}_special`,
    fingerprints: [`fpvisitor_${marker}_a`, `fpvisitor_${marker}_b`],
    payout: `payoutvault_${marker}_special`,
  };
  const secrets = [vault.tin, vault.fingerprint, vault.payout, special.tin, ...special.fingerprints, special.payout];
  // Everything that contains the marker is a vault value (the values are unique to this test).
  const leaks = (text: string) => text.includes(marker);

  // Every affiliate created from now on carries vault references from its first moment, so that the create
  // response and the affiliate.created event would show them if any path selected them.
  await platform.sql.unsafe(`
    alter table affiliates
      alter column tin_vault_id set default '${vault.tin}',
      alter column fingerprint_visitor_ids set default array['${vault.fingerprint}'],
      alter column payout_details_vault_id set default '${vault.payout}'`);

  const responses: ApiResponse[] = [];
  const record = async (p: Promise<ApiResponse>) => {
    const res = await p;
    responses.push(res);
    return res;
  };

  const parent = await record(
    mine.client.post('/api/v1/affiliates', { email: 'vaulted.parent@example.com', status: 'pending' }),
  );
  t.equal(parent.status, 201);
  const id = parent.body.id as string;
  const [stored] = await platform.sql<
    { tin_vault_id: string; fingerprint_visitor_ids: string[]; payout_details_vault_id: string }[]
  >`
    select tin_vault_id, fingerprint_visitor_ids, payout_details_vault_id from affiliates where id = ${id}`;
  t.strictSame(
    { ...stored },
    { tin_vault_id: vault.tin, fingerprint_visitor_ids: [vault.fingerprint], payout_details_vault_id: vault.payout },
    'the row does hold vault references',
  );

  await platform.sql`
    update affiliates set tin_vault_id = ${special.tin}, fingerprint_visitor_ids = ${special.fingerprints},
      payout_details_vault_id = ${special.payout}
    where id = ${id}`;

  const child = await record(
    mine.client.post('/api/v1/affiliates', {
      email: 'vaulted.child@example.com',
      parent_email: 'vaulted.parent@example.com',
    }),
  );
  t.equal(child.status, 201);
  t.equal(child.body.parent_id, id);
  await record(mine.client.get(`/api/v1/affiliates/${id}`));
  await record(mine.client.get(`/api/v1/affiliates/${child.body.id}`));
  await record(mine.client.get('/api/v1/affiliates'));
  await record(mine.client.get('/api/v1/affiliates?status=pending'));
  const firstPage = await record(mine.client.get('/api/v1/affiliates?limit=1'));
  await record(mine.client.get(`/api/v1/affiliates?limit=1&cursor=${encodeURIComponent(firstPage.body.next_cursor)}`));
  t.equal((await record(mine.client.patch(`/api/v1/affiliates/${id}`, { status: 'approved' }))).status, 200);
  t.equal(
    (await record(mine.client.patch(`/api/v1/affiliates/${id}`, { status: 'suspended', display_name: 'Vaulted' })))
      .status,
    200,
  );
  t.equal((await record(mine.client.patch(`/api/v1/affiliates/${id}`, { custom_commission_rate: 0.3 }))).status, 200);
  // Refusals about the vaulted row, too.
  t.equal((await record(mine.client.patch(`/api/v1/affiliates/${id}`, { status: 'pending' }))).status, 409);
  t.equal((await record(mine.client.post('/api/v1/affiliates', { email: 'Vaulted.Parent@example.com' }))).status, 409);
  t.equal((await record(theirs.client.get(`/api/v1/affiliates/${id}`))).status, 404);

  for (const res of responses) {
    t.notOk(leaks(res.text), `no vault value in ${res.status} ${res.text.slice(0, 60)}…`);
    t.notOk(
      /tin_vault_id|fingerprint_visitor_ids|payout_details_vault_id/.test(res.text),
      'no vault field name either',
    );
    const items = res.status >= 300 ? [] : Array.isArray(res.body.data) ? res.body.data : [res.body];
    for (const item of items) t.strictSame(Object.keys(item).sort(), PUBLIC_FIELDS, 'exactly the public fields');
  }
  t.ok(responses.filter((r) => r.status < 300).length >= 11, 'the successful responses were checked');
  t.ok(
    responses.some((r) => r.status < 300 && r.text.includes(id)),
    'the vaulted affiliate was in them',
  );

  // Domain events: written to the outbox, published to the stream.
  await platform.affiliates.relay!.flush();
  const outbox = await platform.sql<
    { type: string; data_text: string }[]
  >`select type, data::text as data_text from outbox where data->>'id' = ${id}`;
  t.same(
    outbox.map((r) => r.type).sort(),
    ['affiliate.approved', 'affiliate.created', 'affiliate.suspended'],
    'the vaulted affiliate produced events',
  );
  const allOutbox = await platform.sql<{ data_text: string }[]>`select data::text as data_text from outbox`;
  for (const row of allOutbox) t.notOk(leaks(row.data_text), 'no vault value in the outbox');

  const messages = await readStream(platform.nc, streamName(platform.prefix, 'DOMAIN_EVENTS'));
  const ofVaulted = messages.filter((m) => (m.envelope.data as { id?: string }).id === id);
  t.same(
    ofVaulted.map((m) => m.envelope.type).sort(),
    ['affiliate.approved', 'affiliate.created', 'affiliate.suspended'],
    'the events are on the stream',
  );
  for (const m of messages) {
    t.notOk(leaks(m.text) || leaks(m.headers), `no vault value in ${m.envelope.type} #${m.seq}`);
    t.strictSame(Object.keys(m.envelope.data).sort(), PUBLIC_FIELDS, 'event data is the public affiliate');
  }
  const conversions = await readStream(platform.nc, streamName(platform.prefix, 'CONVERSIONS'));
  for (const m of conversions) t.notOk(leaks(m.text), 'nor on the conversions stream');

  // Logs of every in-process service (gateway and affiliates, debug level).
  t.ok(
    platform.logs.some((l) => l.includes('affiliate created') && l.includes(id)),
    'the operations did log',
  );
  t.ok(platform.logs.length > 20, 'logs were captured');
  const leaked = platform.logs.filter(leaks);
  t.same(leaked, [], 'no log line holds a vault value');
  for (const s of secrets)
    t.notOk(
      platform.logs.some((l) => l.includes(s)),
      `log free of ${s.split('_')[0]}`,
    );
});
