import t, { type Test } from 'tap';
import { sendRaw, type RawAnswer } from '../helpers/raw-http.ts';
import { startPlatform } from '../helpers/platform.ts';

// Requests Node's HTTP parser refuses before express sees them still get the contract's error envelope, with a
// request id, and the connection is closed.
t.setTimeout(60_000);
const platform = await startPlatform(t);
const port = platform.gateways[0]!.port;

const refused = (t: Test, answer: RawAnswer, statusLine: string, message: string) => {
  t.equal(answer.statusLine, statusLine);
  t.equal(answer.headers['content-type'], 'application/json; charset=utf-8');
  t.equal(answer.headers['connection'], 'close');
  t.match(answer.headers['x-request-id'], /^req_[0-9a-z]{26}$/);
  t.same(answer.body, { error: { code: 'INVALID_INPUT', message, request_id: answer.headers['x-request-id'] } });
};

t.test('a URL longer than the parser takes: 414', async (t) => {
  const answer = await sendRaw(port, `GET /api/v1/affiliates?q=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
  refused(t, answer, 'HTTP/1.1 414 URI Too Long', 'The request URL is too long');
});

t.test('headers larger than the parser takes: 431', async (t) => {
  const answer = await sendRaw(
    port,
    `GET /api/v1/affiliates HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
  );
  refused(t, answer, 'HTTP/1.1 431 Request Header Fields Too Large', 'The request headers are too large');
});

t.test('malformed requests: 400', async (t) => {
  const cases: [string, string][] = [
    ['a NUL byte in a header', 'GET /api/v1/affiliates HTTP/1.1\r\nHost: x\r\nX-Nul: a\u0000b\r\n\r\n'],
    [
      'Transfer-Encoding and Content-Length together',
      'POST /api/v1/affiliates HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n',
    ],
    ['not HTTP at all', 'HELLO THERE\r\n\r\n'],
  ];
  for (const [what, request] of cases) {
    await t.test(what, async (t) =>
      refused(t, await sendRaw(port, request), 'HTTP/1.1 400 Bad Request', 'The request is not valid HTTP'),
    );
  }
});
