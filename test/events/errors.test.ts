import t from 'tap';
import type { ApiResponse } from '../helpers/client.ts';
import { expectError, expectInvalid as invalid, type Detail } from '../helpers/errors.ts';
import { createAffiliate, createCoupon, startWithEvents } from './setup.ts';

/**
 * Every way the events and coupons operations refuse input, with the exact error envelope; hostile bodies are 400
 * INVALID_INPUT with details and never a 5xx.
 */
const { platform } = await startWithEvents(t);
const { sql } = platform;
const merchant = await platform.merchant({ plan: 'scale', rateLimit: 60000 });
const { client } = merchant;
const other = await platform.merchant();
const ann = await createAffiliate(client, 'ann@example.com');
await createCoupon(client, ann.id, 'ANN');

const eventCount = async (): Promise<number> => {
  const [row] = await sql<
    { n: number }[]
  >`select count(*)::int as n from conversion_events where merchant_id = ${merchant.id}`;
  return row!.n;
};

const valid = { event_type: 'purchase', external_id: 'order_1', coupon: 'ANN', amount: 10 };

t.test(
  'the event and its outbox row are written together: when the outbox write fails, no event is stored',
  async (t) => {
    // A trigger refuses this merchant's outbox rows: the event must not be stored without its conversion.recorded.
    // DDL on outbox takes its lock while the services write to it: Postgres may end one of the two as a deadlock,
    // and the statement is then run again.
    const ddl = async (statement: string) => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await sql.unsafe(statement);
        } catch (err) {
          if ((err as { code?: string }).code !== '40P01' || attempt >= 5) throw err;
        }
      }
    };
    await ddl(
      `create function t_refuse_outbox() returns trigger language plpgsql as $$ begin raise exception 'outbox refused'; end $$`,
    );
    await ddl(
      `create trigger t_refuse_outbox before insert on outbox for each row when (new.merchant_id = '${merchant.id}') execute function t_refuse_outbox()`,
    );
    t.teardown(async () => {
      await ddl('drop trigger if exists t_refuse_outbox on outbox');
      await ddl('drop function if exists t_refuse_outbox()');
    });
    const before = await eventCount();
    const res = await client.post('/api/v1/events', { ...valid, external_id: 'order_outbox_refused' });
    expectError(t, res, 500, 'INTERNAL', 'Something went wrong on our side');
    t.equal(await eventCount(), before, 'no event without its outbox row');

    await ddl('drop trigger t_refuse_outbox on outbox');
    const retried = await client.post('/api/v1/events', { ...valid, external_id: 'order_outbox_refused' });
    t.equal(retried.status, 201, 'the same event is accepted once the outbox takes it');
  },
);

t.test('POST /events: hostile bodies are 400 INVALID_INPUT with details, and nothing is stored', async (t) => {
  const before = await eventCount();
  const { external_id: _omitted, ...withoutExternalId } = valid;
  const cases: [string, unknown, Detail[]][] = [
    ['missing external_id', withoutExternalId, [{ path: 'external_id', message: 'is required' }]],
    [
      'empty body',
      {},
      [
        { path: 'event_type', message: 'is required' },
        { path: 'external_id', message: 'is required' },
      ],
    ],
    ['negative amount', { ...valid, amount: -1 }, [{ path: 'amount', message: 'must be >= 0' }]],
    ['amount as text', { ...valid, amount: '10' }, [{ path: 'amount', message: 'must be number' }]],
    ['amount too large', { ...valid, amount: 1e12 }, [{ path: 'amount', message: 'must be < 1000000000000' }]],
    [
      'three decimals in USD',
      { ...valid, amount: 10.001, currency: 'USD' },
      [{ path: 'amount', message: 'must have at most 2 decimal places in USD' }],
    ],
    [
      'a float sum in USD',
      { ...valid, amount: 0.1 + 0.2 },
      [{ path: 'amount', message: 'must have at most 2 decimal places in USD' }],
    ],
    [
      'decimals in JPY',
      { ...valid, amount: 5.5, currency: 'JPY' },
      [{ path: 'amount', message: 'must be a whole number in JPY' }],
    ],
    [
      'four decimals in KWD',
      { ...valid, amount: 1.2345, currency: 'KWD' },
      [{ path: 'amount', message: 'must have at most 3 decimal places in KWD' }],
    ],
    [
      'a tiny amount (exponent form)',
      { ...valid, amount: 1e-7 },
      [{ path: 'amount', message: 'must have at most 2 decimal places in USD' }],
    ],
    [
      'unknown currency',
      { ...valid, currency: 'XYZ' },
      [{ path: 'currency', message: 'is not an ISO 4217 currency in circulation' }],
    ],
    [
      'lower-case currency',
      { ...valid, currency: 'usd' },
      [{ path: 'currency', message: 'must match pattern "^[A-Z]{3}$"' }],
    ],
    [
      'neither cookie_id nor coupon',
      { event_type: 'purchase', external_id: 'order_1', amount: 10 },
      [{ path: 'cookie_id', message: 'cookie_id or coupon is required' }],
    ],
    ['payload an array', { ...valid, payload: [1, 2] }, [{ path: 'payload', message: 'must be object' }]],
    ['payload a string', { ...valid, payload: 'hello' }, [{ path: 'payload', message: 'must be object' }]],
    ['payload null', { ...valid, payload: null }, [{ path: 'payload', message: 'must be object' }]],
    [
      'payload of 1 MB',
      { ...valid, payload: { blob: 'x'.repeat(1_000_000) } },
      [{ path: 'payload', message: 'must be at most 16 KiB as JSON' }],
    ],
    [
      'event_type in capitals',
      { ...valid, event_type: 'Purchase' },
      [{ path: 'event_type', message: 'must match pattern "^[a-z][a-z0-9_.]{0,63}$"' }],
    ],
    [
      'event_type too long',
      { ...valid, event_type: 'e'.repeat(65) },
      [{ path: 'event_type', message: 'must match pattern "^[a-z][a-z0-9_.]{0,63}$"' }],
    ],
    [
      'empty external_id',
      { ...valid, external_id: '' },
      [{ path: 'external_id', message: 'must NOT have fewer than 1 characters' }],
    ],
    [
      'external_id of 256 characters',
      { ...valid, external_id: 'x'.repeat(256) },
      [{ path: 'external_id', message: 'must NOT have more than 255 characters' }],
    ],
    [
      'empty cookie_id',
      { ...valid, cookie_id: '' },
      [{ path: 'cookie_id', message: 'must NOT have fewer than 1 characters' }],
    ],
    ['unknown field', { ...valid, amout: 3 }, [{ path: 'amout', message: 'is not a known field' }]],
    [
      'NUL in payload',
      { ...valid, payload: { note: 'a\u0000b' } },
      [{ path: 'payload.note', message: 'must not contain NUL characters' }],
    ],
    ['a JSON array as body', [valid], [{ path: 'body', message: 'must be a JSON object' }]],
    [
      'several problems at once',
      {
        event_type: 'purchase',
        external_id: 'order_1',
        amount: 1.5,
        currency: 'XYZ',
        payload: { blob: 'y'.repeat(20_000) },
      },
      [
        { path: 'cookie_id', message: 'cookie_id or coupon is required' },
        { path: 'currency', message: 'is not an ISO 4217 currency in circulation' },
        { path: 'payload', message: 'must be at most 16 KiB as JSON' },
      ],
    ],
  ];
  for (const [what, body, details] of cases) {
    await t.test(what, async (t) => invalid(t, await client.post('/api/v1/events', body), details));
  }
  t.equal(await eventCount(), before, 'nothing stored');
});

t.test('POST /events: the payload limit is 16 KiB of JSON, inclusive', async (t) => {
  // {"blob":"…"} is 11 bytes around the string.
  const fits = await client.post('/api/v1/events', {
    ...valid,
    external_id: 'order_16k',
    payload: { blob: 'z'.repeat(16 * 1024 - 11) },
  });
  t.equal(fits.status, 201);
  invalid(
    t,
    await client.post('/api/v1/events', {
      ...valid,
      external_id: 'order_16k_plus',
      payload: { blob: 'z'.repeat(16 * 1024 - 10) },
    }),
    [{ path: 'payload', message: 'must be at most 16 KiB as JSON' }],
  );
});

t.test('POST /events: the merchant default currency must be one in circulation when currency is omitted', async (t) => {
  const odd = await platform.merchant();
  await sql`update merchants set settings = settings || '{"currency": "XTS"}'::jsonb where id = ${odd.id}`;
  invalid(t, await odd.client.post('/api/v1/events', { event_type: 'purchase', external_id: 'o', coupon: 'X' }), [
    { path: 'currency', message: 'is required: the default currency XTS is not supported' },
  ]);
});

t.test('POST /events: the same event_type and external_id with a different body is 409 CONFLICT', async (t) => {
  const body = { event_type: 'purchase', external_id: 'order_conflict', coupon: 'ANN', amount: 25 };
  const first = await client.post('/api/v1/events', body);
  t.equal(first.status, 201);
  const conflict = (res: ApiResponse) =>
    expectError(
      t,
      res,
      409,
      'CONFLICT',
      'An event with this event_type and external_id was recorded with a different body',
      [{ path: 'external_id', message: 'was already used for this event_type with a different body' }],
    );
  conflict(await client.post('/api/v1/events', { ...body, amount: 26 }));
  conflict(await client.post('/api/v1/events', { ...body, payload: { note: 'changed' } }));
  conflict(await client.post('/api/v1/events', { ...body, coupon: 'ann' }));
  // Omitting a field is a different body too, even when it would default to the same value.
  conflict(await client.post('/api/v1/events', { ...body, currency: 'USD' }));
  const [row] = await sql<{ amount: string }[]>`
    select amount::text as amount from conversion_events where merchant_id = ${merchant.id} and external_id = 'order_conflict'`;
  t.equal(row!.amount, '25', 'the stored event is unchanged');
});

t.test(
  'POST /events: the event and its outbox row are one transaction (a failing outbox insert stores nothing)',
  async (t) => {
    await sql.unsafe(`
    create function refuse_conversion() returns trigger language plpgsql as $$
    begin
      if new.type = 'conversion.recorded' then raise exception 'outbox refused for the test'; end if;
      return new;
    end $$;
    create trigger refuse_conversion before insert on outbox for each row execute function refuse_conversion();`);
    const body = { event_type: 'purchase', external_id: 'order_atomic', coupon: 'ANN', amount: 7 };
    const failed = await client.post('/api/v1/events', body);
    expectError(t, failed, 500, 'INTERNAL', 'Something went wrong on our side');
    t.notMatch(failed.text, /outbox refused|plpgsql|at \w+ \(/, 'no SQL or stack trace in the body');
    const [row] = await sql<{ n: number }[]>`
    select count(*)::int as n from conversion_events where merchant_id = ${merchant.id} and external_id = 'order_atomic'`;
    t.equal(row!.n, 0, 'the event was rolled back with its outbox row');

    await sql.unsafe('drop trigger refuse_conversion on outbox; drop function refuse_conversion();');
    const retried = await client.post('/api/v1/events', body);
    t.equal(retried.status, 201, 'the same request succeeds once the outbox accepts it');
  },
);

t.test(
  'POST /events: a request Postgres refuses fails alone, not the concurrent requests recorded with it',
  async (t) => {
    // Concurrent requests are recorded together (services/events/src/recording.ts): one whose outbox row a trigger
    // refuses must not fail the others of its batch, of its merchant or another.
    await sql.unsafe(`
    create function refuse_one() returns trigger language plpgsql as $$
    begin
      if new.data ->> 'external_id' = 'order_batch_refused' then raise exception 'refused for the test'; end if;
      return new;
    end $$;
    create trigger refuse_one before insert on outbox for each row execute function refuse_one();`);
    // The drop locks the outbox and each of its days in turn, while the services' writers lock them in their own
    // order: Postgres may end it as a deadlock victim, and dropping again then succeeds.
    t.teardown(async () => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await sql.unsafe('drop trigger if exists refuse_one on outbox; drop function if exists refuse_one();');
        } catch (err) {
          if ((err as { code?: string }).code !== '40P01' || attempt >= 5) throw err;
        }
      }
    });
    const good = Array.from({ length: 8 }, (_, i) => ({ ...valid, external_id: `order_batch_${i}` }));
    const responses = await Promise.all([
      ...good.map((body) => client.post('/api/v1/events', body)),
      client.post('/api/v1/events', { ...valid, external_id: 'order_batch_refused' }),
      other.client.post('/api/v1/events', { ...valid, external_id: 'order_batch_other_merchant' }),
    ]);
    t.same(
      responses.slice(0, good.length).map((r) => r.status),
      good.map(() => 201),
      'every valid request is recorded',
    );
    expectError(t, responses[good.length]!, 500, 'INTERNAL', 'Something went wrong on our side');
    t.equal(responses[good.length + 1]!.status, 201, "another merchant's concurrent event is recorded");
    const [row] = await sql<{ n: number }[]>`
    select count(*)::int as n from conversion_events where merchant_id = ${merchant.id} and external_id like 'order_batch_%'`;
    t.equal(row!.n, good.length, 'only the valid events are stored');
  },
);

t.test('POST /coupons: refused input', async (t) => {
  const before = await sql<{ n: number }[]>`select count(*)::int as n from coupons where merchant_id = ${merchant.id}`;
  invalid(t, await client.post('/api/v1/coupons', {}), [
    { path: 'code', message: 'is required' },
    { path: 'affiliate_id', message: 'is required' },
  ]);
  for (const code of ['a', 'has space', 'x'.repeat(65), 'ünï', 'semi;colon']) {
    invalid(t, await client.post('/api/v1/coupons', { code, affiliate_id: ann.id }), [
      { path: 'code', message: 'must match pattern "^[A-Za-z0-9_-]{2,64}$"' },
    ]);
  }
  invalid(t, await client.post('/api/v1/coupons', { code: 'OK', affiliate_id: 'aff_nope' }), [
    { path: 'affiliate_id', message: 'must match pattern "^aff_[0-9a-hjkmnp-tv-z]{26}$"' },
  ]);
  const theirs = await createAffiliate(other.client, 'theirs@example.com');
  invalid(t, await client.post('/api/v1/coupons', { code: 'THEIRS', affiliate_id: theirs.id }), [
    { path: 'affiliate_id', message: 'is not an affiliate of this merchant' },
  ]);
  invalid(t, await client.post('/api/v1/coupons', { code: 'OK', affiliate_id: ann.id, discount: 5 }), [
    { path: 'discount', message: 'is not a known field' },
  ]);
  const [after] = await sql<{ n: number }[]>`select count(*)::int as n from coupons where merchant_id = ${merchant.id}`;
  t.equal(after!.n, before[0]!.n, 'nothing stored');
});

t.test('POST /coupons: a duplicate code, in any case, is 409 CONFLICT; another merchant may use it', async (t) => {
  const conflict = [{ path: 'code', message: 'is already taken (codes are case-insensitive)' }];
  expectError(
    t,
    await client.post('/api/v1/coupons', { code: 'ANN', affiliate_id: ann.id }),
    409,
    'CONFLICT',
    'A coupon with this code already exists',
    conflict,
  );
  expectError(
    t,
    await client.post('/api/v1/coupons', { code: 'ann', affiliate_id: ann.id }),
    409,
    'CONFLICT',
    'A coupon with this code already exists',
    conflict,
  );
  const theirs = await createAffiliate(other.client, 'someone@example.com');
  t.equal((await other.client.post('/api/v1/coupons', { code: 'ann', affiliate_id: theirs.id })).status, 201);
});

t.test('GET /coupons: limit, cursor and filters are checked, never clamped', async (t) => {
  for (const limit of ['0', '101', '-1', 'ten', '2.5']) {
    const res = await client.get(`/api/v1/coupons?limit=${limit}`);
    t.equal(res.status, 400, `limit=${limit}`);
    t.equal(res.body.error.code, 'INVALID_INPUT');
    t.same(
      res.body.error.details.map((d: Detail) => d.path),
      ['limit'],
    );
  }
  invalid(t, await client.get('/api/v1/coupons?cursor=forged.cursor'), [
    { path: 'cursor', message: 'is not a cursor issued for this list' },
  ]);
  invalid(t, await client.get('/api/v1/coupons?affiliate_id=ann'), [
    { path: 'affiliate_id', message: 'must match pattern "^aff_[0-9a-hjkmnp-tv-z]{26}$"' },
  ]);
  invalid(t, await client.get('/api/v1/coupons?code=ANN'), [{ path: 'code', message: 'is not a known field' }]);

  // A cursor is bound to its merchant and its filters.
  await createCoupon(client, ann.id, 'ANN-2');
  const page = await client.get('/api/v1/coupons?limit=1');
  t.type(page.body.next_cursor, 'string');
  const cursor = encodeURIComponent(page.body.next_cursor);
  invalid(t, await client.get(`/api/v1/coupons?limit=1&affiliate_id=${ann.id}&cursor=${cursor}`), [
    { path: 'cursor', message: 'is not a cursor issued for this list' },
  ]);
  invalid(t, await other.client.get(`/api/v1/coupons?limit=1&cursor=${cursor}`), [
    { path: 'cursor', message: 'is not a cursor issued for this list' },
  ]);
});

t.test('DELETE /coupons/{id}: unknown and malformed ids are 404', async (t) => {
  for (const id of ['cpn_00000000000000000000000000', 'nope', 'aff_00000000000000000000000000']) {
    expectError(t, await client.delete(`/api/v1/coupons/${id}`), 404, 'NOT_FOUND', 'No such coupon');
  }
});
