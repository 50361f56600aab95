import { connect } from 'node:net';

/** An HTTP answer read off a raw socket: its status line, headers (lower-case names) and JSON body. */
export interface RawAnswer {
  statusLine: string;
  headers: Record<string, string>;
  body: unknown;
}

export function parseRawAnswer(raw: string): RawAnswer {
  const [head, body] = raw.split('\r\n\r\n');
  const [statusLine, ...headerLines] = head!.split('\r\n');
  const headers = Object.fromEntries(
    headerLines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
  );
  return { statusLine: statusLine!, headers, body: JSON.parse(body || 'null') };
}

/**
 * Sends `request` as it is (what no HTTP client would send) and reads until the server closes the connection.
 * Rejects after 10 s: every answer here comes at once. With `piece`, sends it that many bytes at a time, a
 * millisecond apart, as a client on a real network would: still sending when the server answers.
 */
export function sendRaw(port: number, request: string | Buffer, piece?: number): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const bytes = typeof request === 'string' ? Buffer.from(request) : request;
    let sent = 0;
    const sendNext = (): void => {
      if (socket.destroyed || sent >= bytes.length) return;
      const end = piece === undefined ? bytes.length : sent + piece;
      socket.write(bytes.subarray(sent, end));
      sent = end;
      setTimeout(sendNext, 1);
    };
    const socket = connect(port, '127.0.0.1', sendNext);
    let received = '';
    socket.on('data', (c: Buffer) => (received += c.toString('latin1')));
    socket.on('error', () => {});
    socket.on('close', () => {
      try {
        resolve(parseRawAnswer(received));
      } catch (err) {
        reject(new Error(`not an HTTP answer: ${JSON.stringify(received.slice(0, 200))}`, { cause: err }));
      }
    });
    setTimeout(() => reject(new Error('the server did not answer and close within 10 s')), 10_000).unref();
  });
}
