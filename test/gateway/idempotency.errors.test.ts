import t from 'tap';
import { loadAffiliatesConfig } from '@platform/affiliates/config';
import { startAffiliatesService } from '@platform/affiliates/service';
import { api } from '@platform/shared/api';
import { RPC_OUTCOME_HEADER, rpcSubject } from '@platform/shared/catalogue';
import { headers as natsHeaders } from '@nats-io/nats-core';
import type { Msg } from '@nats-io/transport-node';
import { expectError, expectInvalid } from '../helpers/errors.ts';
import { captureLogger, eventually, sleep, startPlatform } from '../helpers/platform.ts';

// A request that finds its key's first request still running waits at most RPC_TIMEOUT_MS for it. Short, so that the
// wait is quick to show, yet long enough for a real create on a loaded machine (at 1 s one sometimes answered 503).
const RPC_TIMEOUT_MS = 3000;
const platform = await startPlatform(t, { env: { RPC_TIMEOUT_MS: String(RPC_TIMEOUT_MS) } });
const { id: merchantId, client } = await platform.merchant();

const withKey = (key: string) => ({ headers: { 'idempotency-key': key } });
const MISMATCH =
  'This Idempotency-Key was used with another request (method, path or body); use a new key for a new request';
const IN_PROGRESS = 'A request with this Idempotency-Key is still in progress; retry it later';

const affiliates = async () =>
  (await platform.sql<{ email: string }[]>`select email from affiliates where merchant_id = ${merchantId}`).map(
    (r) => r.email,
  );

t.test('the same key with another body is refused, and still replays its first answer', async (t) => {
  const first = await client.post('/api/v1/affiliates', { email: 'first@example.com' }, withKey('reused'));
  t.equal(first.status, 201);
  const other = await client.post('/api/v1/affiliates', { email: 'second@example.com' }, withKey('reused'));
  expectError(t, other, 409, 'CONFLICT', MISMATCH);
  t.equal(other.headers.get('idempotent-replayed'), null);
  t.notOk((await affiliates()).includes('second@example.com'), 'the second body was not acted on');
  const again = await client.post('/api/v1/affiliates', { email: 'first@example.com' }, withKey('reused'));
  t.equal(again.text, first.text, 'the first body still replays');
});

t.test('the same key and body on another path is refused', async (t) => {
  const body = { email: 'path@example.com' };
  t.equal((await client.post('/api/v1/affiliates', body, withKey('by-path'))).status, 201);
  expectError(t, await client.post('/api/v1/coupons', body, withKey('by-path')), 409, 'CONFLICT', MISMATCH);
});

t.test('an empty key, one over 255 characters, or one not printable ASCII is a clear 400', async (t) => {
  const detail = [{ path: 'Idempotency-Key', message: 'must be 1 to 255 printable ASCII characters' }];
  const cases: [string, string][] = [
    ['empty', ''],
    ['256 characters', 'k'.repeat(256)],
    ['not ASCII', 'cl\u00e9'],
  ];
  for (const [what, key] of cases) {
    const res = await client.post('/api/v1/affiliates', { email: 'badkey@example.com' }, withKey(key));
    t.test(what, async (t) => expectInvalid(t, res, detail));
  }
  t.notOk((await affiliates()).includes('badkey@example.com'), 'nothing was created');
  const longest = await client.post('/api/v1/affiliates', { email: 'longkey@example.com' }, withKey('k'.repeat(255)));
  t.equal(longest.status, 201, 'a key of 255 characters is accepted');
});

// On a loaded machine the answer may go out before it is stored (the store outlived its deadline and goes on): a
// test changes the key's row only once the answer is in it, or the late store would undo the change.
const answerStored = (key: string) =>
  eventually(
    async () =>
      (await platform.sql`select 1 from idempotency_keys where key = ${key} and status is not null`).length > 0 ||
      undefined,
    10_000,
    `the first answer of ${key} stored`,
  );

t.test('a key whose first request is still running (on another replica) is refused after the wait', async (t) => {
  const body = { email: 'running@example.com' };
  t.equal((await client.post('/api/v1/affiliates', body, withKey('running'))).status, 201);
  await answerStored('running');
  // The stored answer taken away again: the row is as it is while its first request runs elsewhere. The claim is
  // another request's, as it would be: the first request's service may still be keeping its reply in the row (a
  // write that names its request and an unanswered row), which would otherwise land in this one and be replayed.
  await platform.sql`
    update idempotency_keys
    set status = null, headers = null, body = null, request_id = 'req_elsewhere',
        locked_until = now() + interval '1 hour'
    where key = 'running'`;
  const res = await client.post('/api/v1/affiliates', body, withKey('running'));
  expectError(t, res, 409, 'CONFLICT', IN_PROGRESS);
  t.equal(res.headers.get('retry-after'), '1');
});

t.test('a claim its gateway abandoned (unanswered past its lease) is taken over by the same request', async (t) => {
  const body = { email: 'abandoned@example.com' };
  t.equal((await client.post('/api/v1/affiliates', body, withKey('abandoned'))).status, 201);
  await answerStored('abandoned');
  await platform.sql`
    update idempotency_keys set status = null, headers = null, body = null, locked_until = now() - interval '1 second'
    where key = 'abandoned'`;
  const retry = await client.post('/api/v1/affiliates', body, withKey('abandoned'));
  t.equal(retry.headers.get('idempotent-replayed'), null, 'not a replay: the work is done again');
  t.equal(retry.status, 409, 'and the service finds the affiliate it created the first time');
  t.equal(retry.body.error.code, 'CONFLICT');
  const other = await client.post('/api/v1/affiliates', { email: 'x@example.com' }, withKey('abandoned'));
  expectError(t, other, 409, 'CONFLICT', MISMATCH);
});

t.test('requests waiting on a running first request replay its answer once it comes', async (t) => {
  // The affiliates service stood in for by a responder that answers the first request only when told.
  await platform.affiliates.close();
  const subject = rpcSubject(platform.prefix, 'affiliates', api.createAffiliate.name);
  const held: Msg[] = [];
  const sub = platform.nc.subscribe(subject, { callback: (_err, msg) => void held.push(msg) });
  t.teardown(() => sub.unsubscribe());
  await platform.nc.flush();

  const body = { email: 'waited@example.com' };
  const first = client.post('/api/v1/affiliates', body, { ...withKey('waited'), skipSchemaCheck: true });
  while (held.length === 0) await sleep(10);
  const waiting = client.post('/api/v1/affiliates', body, { ...withKey('waited'), skipSchemaCheck: true });
  await sleep(100);
  const answer = { id: 'aff_from_the_first_request', email: body.email };
  const h = natsHeaders();
  h.set(RPC_OUTCOME_HEADER, 'created');
  held[0]!.respond(new TextEncoder().encode(JSON.stringify(answer)), { headers: h });

  const [a, b] = await Promise.all([first, waiting]);
  t.equal(a.status, 201);
  t.same(a.body, answer);
  t.equal(b.status, 201, 'the waiting request answers the same');
  t.equal(b.text, a.text);
  t.equal(b.headers.get('idempotent-replayed'), 'true');
  t.equal(held.length, 1, 'the operation was asked once');
});

t.test('a 500 the service answered is not stored: a retry with the key asks the service again', async (t) => {
  // The responder of the test before is gone: this one fails every request as a service's bug would.
  const subject = rpcSubject(platform.prefix, 'affiliates', api.createAffiliate.name);
  let asked = 0;
  const sub = platform.nc.subscribe(subject, {
    callback: (_err, msg) => {
      asked++;
      const h = natsHeaders();
      h.set(RPC_OUTCOME_HEADER, 'error');
      msg.respond(
        new TextEncoder().encode(JSON.stringify({ code: 'INTERNAL', message: 'Something went wrong on our side' })),
        {
          headers: h,
        },
      );
    },
  });
  t.teardown(() => sub.unsubscribe());
  await platform.nc.flush();
  const body = { email: 'broken@example.com' };
  const first = await client.post('/api/v1/affiliates', body, withKey('broken'));
  expectError(t, first, 500, 'INTERNAL', 'Something went wrong on our side');
  t.same(await platform.sql`select 1 from idempotency_keys where key = 'broken'`, [], 'the key was released');
  const again = await client.post('/api/v1/affiliates', body, withKey('broken'));
  expectError(t, again, 500, 'INTERNAL', 'Something went wrong on our side');
  t.equal(again.headers.get('idempotent-replayed'), null, 'not a replay');
  t.equal(asked, 2, 'the retry asked the service again');
});

t.test('a 503 (no answer from the service) is not stored: a retry with the key does the work', async (t) => {
  // The responders of the tests before are gone: nothing answers the affiliates subjects.
  const body = { email: 'outage@example.com' };
  const during = await client.post('/api/v1/affiliates', body, withKey('outage'));
  t.equal(during.status, 503);
  t.equal(during.body.error.code, 'UNAVAILABLE');
  const rows = await platform.sql`select 1 from idempotency_keys where key = 'outage'`;
  t.equal(rows.length, 0, 'the key was released');

  const { log } = captureLogger('affiliates');
  const restarted = await startAffiliatesService(loadAffiliatesConfig(platform.env), log);
  t.teardown(() => restarted.close());
  // The restarted service's first answers may still outlast the bound on a loaded machine: the client retries 503s.
  let after = await client.post('/api/v1/affiliates', body, withKey('outage'));
  for (let i = 0; i < 5 && after.status === 503; i++)
    after = await client.post('/api/v1/affiliates', body, withKey('outage'));
  t.equal(after.status, 201, 'the retry created the affiliate');
  t.equal(after.headers.get('idempotent-replayed'), null);
  t.ok((await affiliates()).includes('outage@example.com'));
});
