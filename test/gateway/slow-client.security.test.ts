import { connect, type Socket } from 'node:net';
import t from 'tap';
import { startPlatform } from '../helpers/platform.ts';
import { parseRawAnswer } from '../helpers/raw-http.ts';

// Slow clients cannot hold the gateway's connections: headers must arrive within 10 s, the whole request within
// 30 s, and an idle keep-alive connection is closed after 5 s. A client cut off before anything was written to it
// gets 408 with the JSON error envelope. The three clients run at once, to keep the file short.
t.setTimeout(120_000);
const platform = await startPlatform(t);
const { key } = await platform.merchant();
const port = platform.gateways[0]!.port;

interface Cut {
  /** Milliseconds from the first bytes sent (at once on connecting) to the server closing the connection. */
  afterMs: number;
  received: string;
}

/** Opens a connection, sends `start` at once and then `trickle` one byte a second, until the server closes it. */
function trickleUntilClosed(start: string, trickle: string): Promise<Cut> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(port, '127.0.0.1');
    let received = '';
    let began = 0;
    let timer: NodeJS.Timeout | undefined;
    socket.on('connect', () => {
      began = Date.now();
      socket.write(start);
      let i = 0;
      timer = setInterval(() => {
        if (i < trickle.length && !socket.destroyed) socket.write(trickle[i++]!);
      }, 1000);
    });
    socket.on('data', (c: Buffer) => (received += c.toString()));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ afterMs: Date.now() - began, received });
    });
    setTimeout(() => reject(new Error('the server never closed the connection')), 60_000).unref();
  });
}

t.test(
  'headers a byte a second, a body a byte a second, an idle keep-alive connection: each cut off in time',
  async (t) => {
    const headers = `GET /api/v1/affiliates HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nX-Slow: ${'a'.repeat(100)}\r\n\r\n`;
    const body = JSON.stringify({ email: 'slow@example.com', display_name: 'x'.repeat(60) });
    const [slowHeaders, slowBody, idle] = await Promise.all([
      trickleUntilClosed(headers[0]!, headers.slice(1)),
      trickleUntilClosed(
        `POST /api/v1/affiliates HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
        body,
      ),
      trickleUntilClosed('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n', ''),
    ]);

    t.ok(
      slowHeaders.afterMs >= 9_000 && slowHeaders.afterMs <= 10_500,
      `headers: cut off within 10 s (${slowHeaders.afterMs} ms)`,
    );
    const h = parseRawAnswer(slowHeaders.received);
    t.equal(h.statusLine, 'HTTP/1.1 408 Request Timeout');
    t.equal(h.headers['content-type'], 'application/json; charset=utf-8');
    t.equal(h.headers['connection'], 'close');
    t.same(h.body, {
      error: {
        code: 'INVALID_INPUT',
        message: 'The request was not received in time',
        request_id: h.headers['x-request-id'],
      },
    });
    t.match(h.headers['x-request-id'], /^req_[0-9a-z]{26}$/);

    t.ok(slowBody.afterMs >= 29_000 && slowBody.afterMs <= 31_500, `body: cut off at 30 s (${slowBody.afterMs} ms)`);
    const b = parseRawAnswer(slowBody.received);
    t.equal(b.statusLine, 'HTTP/1.1 408 Request Timeout');
    t.same(b.body, {
      error: {
        code: 'INVALID_INPUT',
        message: 'The request was not received in time',
        request_id: b.headers['x-request-id'],
      },
    });
    const [created] = await platform.sql`select 1 from affiliates where email = 'slow@example.com'`;
    t.equal(created, undefined, 'the slow request created nothing');

    t.match(idle.received, /^HTTP\/1\.1 200 OK\r\n/, 'the keep-alive request was answered');
    t.ok(
      idle.afterMs >= 4_500 && idle.afterMs <= 7_000,
      `the idle keep-alive connection closed after about 5 s (${idle.afterMs} ms)`,
    );
  },
);
