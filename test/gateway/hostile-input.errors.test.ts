import { request as httpRequest } from 'node:http';
import t from 'tap';
import { newId } from '@platform/shared/ids';
import { checkAgainstOpenApi, type ApiResponse } from '../helpers/client.ts';
import { startPlatform } from '../helpers/platform.ts';
import { assertError, type Asserts } from './expect.ts';

const platform = await startPlatform(t);
const { client, key, id: merchantId } = await platform.merchant({ scopes: '*' });
const JSON_CT = { 'content-type': 'application/json' };

let seq = 0;
const email = () => `hostile-${++seq}@example.com`;
const rawPost = (raw: string | Buffer, headers: Record<string, string> = JSON_CT) =>
  client.post('/api/v1/affiliates', undefined, { raw, headers });

/** No response may ever be a 5xx: checked on every response of this file. */
function never5xx(t: Asserts, res: ApiResponse, what: string) {
  t.ok(res.status < 500, `${what}: not a 5xx (got ${res.status} ${res.text.slice(0, 200)})`);
}

const existing = await client.post('/api/v1/affiliates', { email: 'existing@example.com', display_name: 'Existing' });
const existingId = existing.body.id as string;

t.test('malformed JSON is 400 INVALID_INPUT with details on the body', async (t) => {
  for (const raw of [
    '{not json',
    '{"email":',
    '{"email":"a@example.com",}',
    "{'email':'a@example.com'}",
    '{"email":NaN}',
    '{"a":1}}',
    '\u001f{}',
    'nul',
    '[1,2',
  ]) {
    assertError(t, await rawPost(raw), 400, 'INVALID_INPUT', { details: [{ path: 'body', message: /JSON/ }] });
  }
  const patch = await client.patch(`/api/v1/affiliates/${existingId}`, undefined, {
    raw: '{"display_name": "x"',
    headers: JSON_CT,
  });
  assertError(t, patch, 400, 'INVALID_INPUT', { details: [{ path: 'body', message: /JSON/ }] });
});

t.test('a JSON array, string, number, boolean or null as the body is 400', async (t) => {
  for (const raw of ['[]', '[{"email":"a@example.com"}]', '"a@example.com"', '42', 'true', 'null', ' null ']) {
    assertError(t, await rawPost(raw), 400, 'INVALID_INPUT', {
      details: [{ path: 'body', message: 'must be a JSON object' }],
    });
  }
  const patch = await client.patch(`/api/v1/affiliates/${existingId}`, undefined, {
    raw: '["status"]',
    headers: JSON_CT,
  });
  assertError(t, patch, 400, 'INVALID_INPUT', { detailPaths: ['body'] });
});

t.test('wrong types are 400 with a detail per offending field', async (t) => {
  const cases: [Record<string, unknown>, string[]][] = [
    [{ email: 42 }, ['email']],
    [{ email: ['a@example.com'] }, ['email']],
    [{ email: email(), custom_commission_rate: '0.2' }, ['custom_commission_rate']],
    [{ email: email(), custom_commission_rate: true }, ['custom_commission_rate']],
    [{ email: email(), custom_commission_rate: 1.5 }, ['custom_commission_rate']],
    [{ email: email(), display_name: null }, ['display_name']],
    [{ email: email(), status: 1 }, ['status']],
    [{ email: email(), status: 'retired' }, ['status']],
    [{ email: email(), slug: { a: 1 } }, ['slug']],
    [
      { email: 7, slug: 5, status: 'x', custom_commission_rate: 'lots' },
      ['email', 'slug', 'status', 'custom_commission_rate'],
    ],
    [{}, ['email']],
  ];
  for (const [body, paths] of cases)
    assertError(t, await client.post('/api/v1/affiliates', body), 400, 'INVALID_INPUT', { detailPaths: paths });
  assertError(t, await client.patch(`/api/v1/affiliates/${existingId}`, { display_name: 5 }), 400, 'INVALID_INPUT', {
    detailPaths: ['display_name'],
  });
  assertError(t, await client.patch(`/api/v1/affiliates/${existingId}`, {}), 400, 'INVALID_INPUT', {
    detailPaths: ['body'],
  });
});

t.test('unknown body fields are 400 and the details name them', async (t) => {
  const res = await client.post('/api/v1/affiliates', { email: email(), nickname: 'x', tin_vault_id: 'vault_1' });
  assertError(t, res, 400, 'INVALID_INPUT', {
    details: [
      { path: 'nickname', message: 'is not a known field' },
      { path: 'tin_vault_id', message: 'is not a known field' },
    ],
  });
  const patch = await client.patch(`/api/v1/affiliates/${existingId}`, { display_name: 'Ok', merchant_id: 'mer_x' });
  assertError(t, patch, 400, 'INVALID_INPUT', { details: [{ path: 'merchant_id', message: 'is not a known field' }] });
  // Prototype keys are plain unknown fields, not a way to set anything.
  const proto = await rawPost(
    `{"email":"${email()}","__proto__":{"status":"suspended"},"constructor":{"prototype":{"x":1}}}`,
  );
  assertError(t, proto, 400, 'INVALID_INPUT', { detailPaths: ['__proto__', 'constructor'] });
});

t.test('numbers beyond float range are refused, not turned into null', async (t) => {
  for (const n of ['1e400', '-1e400']) {
    const res = await rawPost(`{"email":"${email()}","custom_commission_rate":${n}}`);
    assertError(t, res, 400, 'INVALID_INPUT', { detailPaths: ['custom_commission_rate'] });
  }
  const patch = await client.patch(`/api/v1/affiliates/${existingId}`, undefined, {
    raw: '{"custom_commission_rate":1e999}',
    headers: JSON_CT,
  });
  assertError(t, patch, 400, 'INVALID_INPUT', { detailPaths: ['custom_commission_rate'] });
  t.equal((await client.get(`/api/v1/affiliates/${existingId}`)).body.custom_commission_rate, null, 'unchanged');
});

t.test('deeply nested JSON is 400, never a crash', async (t) => {
  const depth = 100_000;
  const nestedArray = `{"email":"${email()}","display_name":${'['.repeat(depth)}${']'.repeat(depth)}}`;
  assertError(t, await rawPost(nestedArray), 400, 'INVALID_INPUT', {
    detailPaths: [`display_name${'[0]'.repeat(31)}`],
  });
  assertError(t, await rawPost('['.repeat(depth) + ']'.repeat(depth)), 400, 'INVALID_INPUT');
  const nestedObject = `{"email":"${email()}","x":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`;
  assertError(t, await rawPost(nestedObject), 400, 'INVALID_INPUT');
  // Ordinary nesting still reaches the service's own validation (here: an unknown field).
  assertError(
    t,
    await client.post('/api/v1/affiliates', { email: email(), x: { a: { b: [1, [2]] } } }),
    400,
    'INVALID_INPUT',
    {
      details: [{ path: 'x', message: 'is not a known field' }],
    },
  );
});

t.test('odd Unicode: stored exactly when it is text, refused with 400 when it cannot be stored', async (t) => {
  const names = [
    'Zoë 👩‍👩‍👧 🚀',
    '\u200fשלום עולם\u200e',
    'مرحبا \u202eevil\u202c',
    'e\u0301\u0301 zero\u200bwidth',
    '𝕳𝖊𝖑𝖑𝖔 \ud83d\ude00',
    '\ufeffBOM',
  ];
  for (const display_name of names) {
    const created = await client.post('/api/v1/affiliates', { email: email(), display_name });
    t.equal(created.status, 201, JSON.stringify(display_name));
    t.equal(created.body.display_name, display_name, 'echoed exactly');
    t.equal(
      (await client.get(`/api/v1/affiliates/${created.body.id}`)).body.display_name,
      display_name,
      'stored exactly',
    );
  }
  // NUL cannot be stored in Postgres text: 400 wherever it appears, never 500.
  assertError(
    t,
    await client.post('/api/v1/affiliates', { email: email(), display_name: 'a\u0000b' }),
    400,
    'INVALID_INPUT',
    { detailPaths: ['display_name'] },
  );
  assertError(t, await client.post('/api/v1/affiliates', { email: 'nul\u0000@example.com' }), 400, 'INVALID_INPUT', {
    detailPaths: ['email'],
  });
  assertError(t, await rawPost(`{"email":"${email()}","x\\u0000y":1}`), 400, 'INVALID_INPUT');
  assertError(
    t,
    await client.patch(`/api/v1/affiliates/${existingId}`, { display_name: '\u0000' }),
    400,
    'INVALID_INPUT',
    { detailPaths: ['display_name'] },
  );
  assertError(t, await client.get('/api/v1/affiliates?status=%00'), 400, 'INVALID_INPUT', { detailPaths: ['status'] });
  assertError(t, await client.get('/api/v1/affiliates?cursor=abc%00def'), 400, 'INVALID_INPUT', {
    detailPaths: ['cursor'],
  });
  // Unpaired surrogates are not text: refused, not silently replaced by U+FFFD.
  assertError(t, await rawPost(`{"email":"${email()}","display_name":"x\\ud800y"}`), 400, 'INVALID_INPUT', {
    detailPaths: ['display_name'],
  });
  assertError(t, await rawPost(`{"email":"${email()}","display_name":"\\udfff"}`), 400, 'INVALID_INPUT', {
    detailPaths: ['display_name'],
  });
  assertError(t, await rawPost(`{"email":"${email()}","\\ud800":1}`), 400, 'INVALID_INPUT');
  // Bytes that are not UTF-8 are not JSON text: refused, not replaced.
  const latin1 = Buffer.concat([
    Buffer.from(`{"email":"${email()}","display_name":"Caf`),
    Buffer.from([0xe9]),
    Buffer.from('"}'),
  ]);
  assertError(t, await rawPost(latin1), 400, 'INVALID_INPUT', { detailPaths: ['body'] });
  // Non-ASCII e-mails and slugs do not match their formats.
  assertError(t, await client.post('/api/v1/affiliates', { email: '🚀@example.com' }), 400, 'INVALID_INPUT', {
    detailPaths: ['email'],
  });
  assertError(
    t,
    await client.post('/api/v1/affiliates', { email: email(), slug: 'slug\u200f' }),
    400,
    'INVALID_INPUT',
    { detailPaths: ['slug'] },
  );
  const rows =
    await platform.sql`select display_name from affiliates where merchant_id = ${merchantId} and (display_name like ${'%\ufffd%'})`;
  t.same(rows, [], 'nothing was stored with a replacement character');
});

t.test('SQL metacharacters are refused or stored literally, never a 5xx', async (t) => {
  const evil = "'; drop table affiliates; --";
  assertError(t, await client.post('/api/v1/affiliates', { email: evil }), 400, 'INVALID_INPUT', {
    detailPaths: ['email'],
  });
  assertError(t, await client.post('/api/v1/affiliates', { email: email(), slug: evil }), 400, 'INVALID_INPUT', {
    detailPaths: ['slug'],
  });
  assertError(
    t,
    await client.post('/api/v1/affiliates', { email: email(), parent_email: evil }),
    400,
    'INVALID_INPUT',
    { detailPaths: ['parent_email'] },
  );
  assertError(t, await client.get(`/api/v1/affiliates?status=${encodeURIComponent(evil)}`), 400, 'INVALID_INPUT', {
    detailPaths: ['status'],
  });
  assertError(t, await client.get(`/api/v1/affiliates?cursor=${encodeURIComponent(evil)}`), 400, 'INVALID_INPUT', {
    detailPaths: ['cursor'],
  });
  assertError(
    t,
    await client.get(`/api/v1/affiliates?limit=${encodeURIComponent('1; delete from affiliates')}`),
    400,
    'INVALID_INPUT',
    { detailPaths: ['limit'] },
  );
  assertError(t, await client.get(`/api/v1/affiliates?${encodeURIComponent(evil)}=1`), 400, 'INVALID_INPUT', {
    detailPaths: [evil],
  });
  assertError(t, await client.get(`/api/v1/affiliates/${encodeURIComponent(evil)}`), 404, 'NOT_FOUND');
  assertError(
    t,
    await client.patch(`/api/v1/affiliates/${encodeURIComponent(evil)}`, { display_name: 'x' }),
    404,
    'NOT_FOUND',
  );

  for (const display_name of [evil, "Robert'); DROP TABLE merchants;--", '$1 $$ \\x00 %_ \\\\ `id`', '" OR "1"="1']) {
    const res = await client.post('/api/v1/affiliates', { email: email(), display_name });
    never5xx(t, res, display_name);
    t.equal(res.status, 201);
    t.equal(
      (await client.get(`/api/v1/affiliates/${res.body.id}`)).body.display_name,
      display_name,
      'stored literally',
    );
  }
  const quoted = await client.post('/api/v1/affiliates', { email: "o'brien+x'--@example.com" });
  t.equal(quoted.status, 201, 'an e-mail with quotes is valid and stored literally');
  t.equal(quoted.body.email, "o'brien+x'--@example.com");
  const child = await client.post('/api/v1/affiliates', { email: email(), parent_email: "O'Brien+X'--@example.com" });
  t.equal(child.status, 201, 'and found again as a parent');
  t.equal(child.body.parent_id, quoted.body.id);
  const [count] = await platform.sql<{ n: number }[]>`select count(*)::int as n from affiliates`;
  t.ok(count!.n > 0, 'the affiliates table is still there');
  t.equal((await client.get('/api/v1/affiliates')).status, 200);
});

t.test('out-of-range or malformed limit is 400 on path limit; valid limits work', async (t) => {
  for (const q of [
    'limit=0',
    'limit=101',
    'limit=-1',
    'limit=abc',
    'limit=1.5',
    'limit=1&limit=2',
    'limit=',
    'limit=1000000000000',
    'limit[]=1',
  ]) {
    const res = await client.get(`/api/v1/affiliates?${q}`);
    const expected = q === 'limit[]=1' ? ['limit[]'] : ['limit'];
    assertError(t, res, 400, 'INVALID_INPUT', { detailPaths: expected });
  }
  for (const n of [1, 100]) {
    const res = await client.get(`/api/v1/affiliates?limit=${n}`);
    t.equal(res.status, 200, `limit=${n}`);
    t.ok(res.body.data.length <= n);
  }
  const one = await client.get('/api/v1/affiliates?limit=1');
  t.equal(one.body.data.length, 1, 'limit=1 returns one row');
  t.type(one.body.next_cursor, 'string', 'and a cursor to the rest');
});

t.test('unknown query parameters are 400 naming them', async (t) => {
  assertError(t, await client.get('/api/v1/affiliates?foo=bar'), 400, 'INVALID_INPUT', {
    details: [{ path: 'foo', message: 'is not a known field' }],
  });
  assertError(t, await client.get('/api/v1/affiliates?Limit=5'), 400, 'INVALID_INPUT', { detailPaths: ['Limit'] });
  assertError(t, await client.get('/api/v1/affiliates?offset=10&page=2'), 400, 'INVALID_INPUT', {
    detailPaths: ['offset', 'page'],
  });
  assertError(t, await client.get(`/api/v1/affiliates/${existingId}?expand=parent`), 400, 'INVALID_INPUT', {
    detailPaths: ['expand'],
  });
  assertError(t, await client.post('/api/v1/affiliates?dry_run=1', { email: email() }), 400, 'INVALID_INPUT', {
    detailPaths: ['dry_run'],
  });
});

t.test('a body that is not JSON is 415 INVALID_INPUT', async (t) => {
  const body = JSON.stringify({ email: email() });
  for (const ct of [
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/xml',
    'application/json-patch',
    'application/json; charset=latin1',
  ]) {
    assertError(t, await rawPost(body, { 'content-type': ct }), 415, 'INVALID_INPUT');
  }
  assertError(t, await rawPost(Buffer.from(body), {}), 415, 'INVALID_INPUT');
  assertError(
    t,
    await rawPost('email=a%40example.com', { 'content-type': 'application/x-www-form-urlencoded' }),
    415,
    'INVALID_INPUT',
  );
  const patch = await client.patch(`/api/v1/affiliates/${existingId}`, undefined, {
    raw: 'display_name=x',
    headers: { 'content-type': 'text/plain' },
  });
  assertError(t, patch, 415, 'INVALID_INPUT');
  t.equal(
    (await client.get('/api/v1/affiliates?limit=100')).body.data.filter(
      (a: { email: string }) => a.email === JSON.parse(body).email,
    ).length,
    0,
    'nothing created',
  );
  // application/json with a charset parameter is still JSON.
  t.equal(
    (await rawPost(JSON.stringify({ email: email() }), { 'content-type': 'application/json; charset=utf-8' })).status,
    201,
  );
});

/** A raw request with node:http, so that the client reports exactly what happened to its upload and the answer. */
function upload(opts: {
  size: number;
  contentType: string;
  chunked?: boolean;
  auth?: boolean;
}): Promise<{ uploadError: string | null; res: ApiResponse | null; error: string | null }> {
  return new Promise((resolve) => {
    let uploadError: string | null = null;
    const headers: Record<string, string> = { 'content-type': opts.contentType };
    if (opts.auth !== false) headers['authorization'] = `Bearer ${key}`;
    if (!opts.chunked) headers['content-length'] = String(opts.size);
    const req = httpRequest(
      `${platform.baseUrl}/api/v1/affiliates`,
      { method: 'POST', headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const h = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') h.set(k, v);
          let body: unknown;
          try {
            body = JSON.parse(text);
          } catch {
            body = undefined;
          }
          // Let the upload side report too (an EPIPE or reset after the answer would show up here).
          setTimeout(
            () => resolve({ uploadError, res: { status: res.statusCode!, headers: h, body, text }, error: null }),
            50,
          );
        });
        res.on('error', (e) => resolve({ uploadError, res: null, error: e.message }));
      },
    );
    req.on('error', (e) => {
      uploadError = e.message;
      setTimeout(() => resolve({ uploadError, res: null, error: e.message }), 200);
    });
    const chunk = Buffer.alloc(64 * 1024, opts.contentType.includes('json') ? ' ' : 'a');
    let sent = 0;
    const write = () => {
      while (sent < opts.size) {
        const n = Math.min(chunk.length, opts.size - sent);
        sent += n;
        if (!req.write(n === chunk.length ? chunk : chunk.subarray(0, n))) return void req.once('drain', write);
      }
      req.end();
    };
    write();
  });
}

t.test('a 10 MB body is 413 INVALID_INPUT, received in full by the client (no reset)', async (t) => {
  const MB10 = 10 * 1024 * 1024;
  for (const chunked of [false, true]) {
    const out = await upload({ size: MB10, contentType: 'application/json', chunked });
    t.equal(out.error, null, `chunked=${chunked}: the answer arrived (${out.error})`);
    t.equal(out.uploadError, null, `chunked=${chunked}: the upload was not reset`);
    if (!out.res) continue;
    assertError(t, out.res, 413, 'INVALID_INPUT');
    checkAgainstOpenApi('POST', '/api/v1/affiliates', out.res.status, out.res.body);
  }
  // Just over 1 MiB is too large as well; under it, the body is read and validated (the limit is 1 MiB, not less).
  const over = await upload({ size: 1024 * 1024 + 1, contentType: 'application/json' });
  t.equal(over.res?.status, 413, 'just over 1 MiB: 413');
  const under = `{"email":"${email()}","display_name":"${'x'.repeat(1_040_000)}"}`;
  assertError(t, await rawPost(under), 400, 'INVALID_INPUT', { detailPaths: ['display_name'] });
  // Within bytes of the limit the request to the service no longer fits a NATS message: still the service's 400.
  const atLimit = `{"email":"${email()}","display_name":"${'x'.repeat(1024 * 1024 - 80)}"}`;
  t.ok(Buffer.byteLength(atLimit) <= 1024 * 1024, `${Buffer.byteLength(atLimit)} bytes: within 1 MiB`);
  assertError(t, await rawPost(atLimit), 400, 'INVALID_INPUT', { detailPaths: ['display_name'] });
});

t.test('a large non-JSON body is 415, received in full by the client (no reset)', async (t) => {
  const out = await upload({ size: 5 * 1024 * 1024, contentType: 'text/plain' });
  t.equal(out.error, null, `the answer arrived (${out.error})`);
  t.equal(out.uploadError, null, 'the upload was not reset');
  if (out.res) assertError(t, out.res, 415, 'INVALID_INPUT');
});

t.test('a malformed affiliate id in the path is 404 NOT_FOUND', async (t) => {
  const other = await platform.merchant();
  const foreign = (await other.client.post('/api/v1/affiliates', { email: 'foreign@example.com' })).body.id as string;
  const ids = [
    'nope',
    'aff_123',
    existingId.toUpperCase(),
    existingId.replace(/^aff_/, 'mer_'),
    `${existingId}x`,
    existingId.slice(0, -1),
    `${existingId}%20`,
    `aff_${'u'.repeat(26)}`,
    '..%2F..%2Fmerchants',
    '%00',
    `${existingId}%00`,
    '%E0%A4%A',
    '%',
    '%F0%9F%9A%80',
    'a'.repeat(5000),
    newId('aff'),
    foreign,
  ];
  for (const id of ids) {
    assertError(t, await client.get(`/api/v1/affiliates/${id}`), 404, 'NOT_FOUND');
    assertError(t, await client.patch(`/api/v1/affiliates/${id}`, { display_name: 'x' }), 404, 'NOT_FOUND');
  }
  t.equal(
    (await other.client.get(`/api/v1/affiliates/${foreign}`)).body.display_name,
    'Foreign',
    "the other merchant's row is unchanged",
  );
});

t.test('unknown routes and unknown methods are 404 NOT_FOUND', async (t) => {
  const cases: [string, string][] = [
    ['GET', '/api/v1/nope'],
    ['GET', '/api/v1'],
    ['GET', '/api/v1/'],
    ['GET', '/api/v1/affiliates/x/y'],
    ['GET', `/api/v1/affiliates/${existingId}/children`],
    ['GET', '/api/v2/affiliates'],
    ['GET', '/'],
    ['GET', '/api/v1/openapi/extra'],
    ['PUT', '/api/v1/affiliates'],
    ['PUT', `/api/v1/affiliates/${existingId}`],
    ['DELETE', `/api/v1/affiliates/${existingId}`],
    ['DELETE', '/api/v1/affiliates'],
    ['PATCH', '/api/v1/affiliates'],
    ['POST', `/api/v1/affiliates/${existingId}`],
    ['OPTIONS', '/api/v1/affiliates'],
    ['PROPFIND', '/api/v1/affiliates'],
  ];
  for (const [method, path] of cases) {
    const res = await client.request(method, path);
    assertError(t, res, 404, 'NOT_FOUND');
    t.notOk(res.headers.get('allow'), `${method} ${path}: no Allow header reveals the routes`);
  }
  t.equal(
    (await client.get(`/api/v1/affiliates/${existingId}`)).body.display_name,
    'Existing',
    'nothing was changed or deleted',
  );
});

t.test(
  'the API answers under /api/v1 as Express matches routes (any case, a trailing slash), and only there',
  async (t) => {
    for (const path of ['/API/V1/affiliates?limit=1', '/Api/v1/affiliates/?limit=1']) {
      const res = await client.get(path);
      t.equal(res.status, 200, `${path}: ${res.text.slice(0, 200)}`);
    }
    for (const path of ['/api/v1x/affiliates', '/api/v10/affiliates', '/apiv1/affiliates'])
      assertError(t, await client.get(path), 404, 'NOT_FOUND');
  },
);

t.test('after all of that the platform is still up', async (t) => {
  const list = await client.get('/api/v1/affiliates?limit=100');
  t.equal(list.status, 200);
  t.ok(list.body.data.length > 10);
  t.equal((await client.post('/api/v1/affiliates', { email: email() })).status, 201);
  const ready = await fetch(`http://127.0.0.1:${platform.gateways[0]!.opsPort}/readyz`);
  t.equal(ready.status, 200);
  const internal = platform.logs.filter((l) => /"msg":"(unhandled gateway error|operation failed)"/.test(l));
  t.same(internal, [], 'no request ended in an internal error');
});
