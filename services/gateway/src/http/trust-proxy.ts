import { isIP } from 'node:net';
import { Type } from '@sinclair/typebox';
import { ConfigError } from '@platform/shared/config';

/**
 * TRUST_PROXY: which hops in front of the gateway may say who the client is (X-Forwarded-For, -Proto, -Host), so
 * that per-IP limits (sign-in, tracking) count the client, not the ingress. A proxy appends the address it saw to
 * X-Forwarded-For, and a client can send any X-Forwarded-For of its own; trusting every hop (`true`) would take the
 * leftmost, client-chosen, address, so it is refused. Accepted, as express's `trust proxy` takes them:
 * - `false` or `0`: no proxy; the client is the socket's peer;
 * - a hop count: that many proxies in front (1: an ingress controller alone), the client being the address the
 *   outermost of them appended;
 * - a comma-separated list of proxy addresses or CIDRs (and express's names loopback, linklocal, uniquelocal): the
 *   client is the rightmost address not in the list.
 */
const ITEM = '(loopback|linklocal|uniquelocal|[0-9A-Fa-f.:]+(/[0-9]{1,3})?)';
export const TRUST_PROXY = Type.String({
  default: 'false',
  // A first sieve, which the chart's schema repeats; trustProxySetting checks each address at start.
  pattern: `^(false|[0-9]{1,2}|${ITEM}( *, *${ITEM})*)$`,
  description:
    'the proxies in front of the gateway whose X-Forwarded-* count: false, a hop count (1: the ingress alone) or a comma-separated list of their addresses or CIDRs',
});

const NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** The `trust proxy` setting for express, or ConfigError naming TRUST_PROXY. */
export function trustProxySetting(value: string): number | string[] {
  const refuse = (problem: string) => new ConfigError('TRUST_PROXY', `${problem} (got ${JSON.stringify(value)})`);
  if (value === 'false') return 0;
  if (/^[0-9]+$/.test(value)) return Number(value);
  const items = value.split(',').map((s) => s.trim());
  for (const item of items) {
    if (NAMES.has(item)) continue;
    const [address, prefix, extra] = item.split('/');
    const family = isIP(address ?? '');
    if (family === 0 || extra !== undefined)
      throw refuse(`has ${JSON.stringify(item)}, which is not an IP address or CIDR`);
    if (prefix !== undefined) {
      const bits = Number(prefix);
      if (!/^[0-9]{1,3}$/.test(prefix) || bits > (family === 4 ? 32 : 128))
        throw refuse(`has ${JSON.stringify(item)}, whose prefix length is out of range`);
    }
  }
  return items;
}
