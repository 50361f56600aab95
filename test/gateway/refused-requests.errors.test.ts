import t from 'tap';
import { sendRaw, type RawAnswer } from '../helpers/raw-http.ts';
import { startPlatform } from '../helpers/platform.ts';

// A request the gateway refuses before reading all of it (Node's parser gives up at its header limit, some 16 KB into
// a 100 KB URL) still gets its whole answer: the status line and the error envelope, never a connection reset. The
// gateway answers, half-closes, and reads the rest of what the client sends before closing (as nginx's lingering
// close does): closing a socket with unread bytes makes the kernel reset the connection, and the reset can overtake
// the answer. Several at once, many times over, since the loss was a race.
t.setTimeout(120_000);
const platform = await startPlatform(t);
const port = platform.gateways[0]!.port;
const ROUNDS = Number(process.env['REFUSED_REQUEST_ROUNDS'] ?? 50);
const BIG = 100_000;
// Sent 20,000 bytes at a time: the client is still sending when the gateway answers, as on a real network, and the
// first piece, the one Node's parser refuses, holds the request line (its 414 or 431 is told from that piece).
const PIECE = 20_000;

const cases: { what: string; request: string; statusLine: string; message: string }[] = [
  {
    what: 'a 100 KB URL',
    request: `GET /api/v1/affiliates?q=${'a'.repeat(BIG)} HTTP/1.1\r\nHost: x\r\n\r\n`,
    statusLine: 'HTTP/1.1 414 URI Too Long',
    message: 'The request URL is too long',
  },
  {
    what: 'a 100 KB header',
    request: `GET /api/v1/affiliates HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(BIG)}\r\n\r\n`,
    statusLine: 'HTTP/1.1 431 Request Header Fields Too Large',
    message: 'The request headers are too large',
  },
  {
    what: '100 KB after a malformed header',
    request: `POST /api/v1/affiliates HTTP/1.1\r\nHost: x\r\nX-Nul: a\u0000b\r\nX-Pad: ${'a'.repeat(BIG)}\r\n\r\n`,
    statusLine: 'HTTP/1.1 400 Bad Request',
    message: 'The request is not valid HTTP',
  },
];

const answered = (answer: RawAnswer, statusLine: string, message: string): boolean => {
  const requestId = answer.headers['x-request-id'];
  const body = answer.body as { error?: { code?: string; message?: string; request_id?: string } } | null;
  return (
    answer.statusLine === statusLine &&
    answer.headers['connection'] === 'close' &&
    body?.error?.code === 'INVALID_INPUT' &&
    body.error.message === message &&
    body.error.request_id === requestId
  );
};

t.test('over-long and malformed requests, several at once: each gets its status line and envelope', async (t) => {
  const lost: string[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    // Every case twice per round, all at once.
    const sent = [...cases, ...cases].map(async ({ what, request, statusLine, message }) => {
      const answer = await sendRaw(port, request, PIECE).catch((err: Error) => err);
      if (answer instanceof Error || !answered(answer, statusLine, message))
        lost.push(`round ${round}, ${what}: ${answer instanceof Error ? answer.message : answer.statusLine}`);
    });
    await Promise.all(sent);
  }
  t.same(lost, [], `${ROUNDS * cases.length * 2} refused requests, every answer whole`);
});

t.test('the gateway still answers afterwards', async (t) => {
  const res = await fetch(`http://127.0.0.1:${port}/healthz`);
  t.equal(res.status, 200);
});
