import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { ErrorDetail } from '@platform/shared/errors';

/** No payload of the API nests this deep; deeper bodies are refused before anything recurses over them. */
export const MAX_JSON_DEPTH = 32;

// With the u flag a surrogate pair is one code point, so this matches only a surrogate without its partner.
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * Parsed JSON that cannot travel on unchanged is refused here, before it is forwarded: numbers beyond float range
 * (1e400 parses to Infinity, which JSON.stringify would turn into null), unpaired surrogates (UTF-8 and Postgres
 * cannot hold them; they would silently become U+FFFD), and nesting deeper than MAX_JSON_DEPTH. Iterative, so a
 * hostile body cannot exhaust the stack. Returns the first problem in document order, or null.
 */
export function checkJsonBody(body: unknown): ErrorDetail | null {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value: body, path: '', depth: 0 }];
  while (stack.length > 0) {
    const { value, path, depth } = stack.pop()!;
    const shown = path || 'body';
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) return { path: shown, message: 'is out of range' };
    } else if (typeof value === 'string') {
      if (LONE_SURROGATE.test(value)) return { path: shown, message: 'is not valid Unicode text (unpaired surrogate)' };
    } else if (value !== null && typeof value === 'object') {
      if (depth >= MAX_JSON_DEPTH) return { path: shown, message: `nests deeper than ${MAX_JSON_DEPTH} levels` };
      const children: { value: unknown; path: string; depth: number }[] = [];
      if (Array.isArray(value)) {
        value.forEach((v, i) => children.push({ value: v, path: `${path}[${i}]`, depth: depth + 1 }));
      } else {
        for (const [k, v] of Object.entries(value)) {
          if (LONE_SURROGATE.test(k))
            return { path: shown, message: 'has a field name that is not valid Unicode text' };
          children.push({ value: v, path: path ? `${path}.${k}` : k, depth: depth + 1 });
        }
      }
      for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
    }
  }
  return null;
}

/** For express.json's `verify`: JSON must be UTF-8 (RFC 8259); invalid bytes are refused, not replaced by U+FFFD. */
export function verifyUtf8(_req: IncomingMessage, _res: unknown, buf: Buffer, encoding: string): void {
  if (encoding === 'utf-8' && !isUtf8(buf))
    throw Object.assign(new Error('the body is not valid UTF-8'), { status: 400, type: 'body.not.utf8' });
}

/**
 * Reads and discards the rest of a request body, then calls `done` (not at all when the client went away).
 * Answering while the client is still sending and then closing makes the kernel reset the connection, and the
 * client can lose the answer; reading the body first lets it arrive.
 */
export function drainBody(req: IncomingMessage, done: () => void): void {
  if (req.readableEnded) return done();
  let called = false;
  const finish = (ok: boolean) => {
    if (called) return;
    called = true;
    if (ok) done();
  };
  req.once('end', () => finish(true));
  req.once('close', () => finish(req.readableEnded));
  req.once('error', () => finish(false));
  req.resume();
}

/** The bounds of a lingering close, as nginx's lingering_time and lingering_timeout, and what a body may be. */
const LINGER_MS = 5_000;
const LINGER_QUIET_MS = 1_000;
const LINGER_MAX_BYTES = 2 * 1024 * 1024;

/**
 * Closes a connection whose request was refused before it was read whole, once the answer is written: half-closes it
 * (the answer, then FIN) and reads and discards what the client still sends until it closes its side, then destroys
 * it. Destroying it at once would leave the client's bytes unread, and the kernel answers those with a reset that can
 * overtake the answer: the client sees the connection reset instead of its 414 (nginx's lingering close). Bounded: a
 * client that goes quiet for a second, keeps sending past 2 MiB or for 5 s is cut off.
 */
export function lingeringClose(socket: Socket): void {
  let discarded = 0;
  const cut = () => socket.destroy();
  const deadline = setTimeout(cut, LINGER_MS);
  socket.once('close', () => clearTimeout(deadline));
  socket.setTimeout(LINGER_QUIET_MS, cut);
  socket.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > LINGER_MAX_BYTES) cut();
  });
  socket.once('end', cut);
  socket.end();
  socket.resume();
}
