import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { checkUrlShape, RefusedAddressError, type AddressPolicy } from './domain/addresses.ts';

// The SSRF guard's I/O: names resolved, every address checked by the rules of domain/addresses.ts, connections made
// only to a checked address.

/**
 * Resolves a host name (or takes an IP literal) and returns the address to connect to. Every address the name
 * resolves to must be allowed, not just the first: otherwise a name with one public and one private record would
 * pass the check and could connect to the private one later.
 */
export async function resolveAllowed(
  hostname: string,
  policy: AddressPolicy,
  lookup: (host: string) => Promise<{ address: string; family: number }[]> = (host) =>
    dnsLookup(host, { all: true, verbatim: true }),
): Promise<{ address: string; family: 4 | 6 }> {
  const bare = hostname.replace(/^\[|\]$/g, '');
  if (isIP(bare)) {
    if (!policy.allows(bare)) throw new RefusedAddressError(`${bare} is not a public address`);
    return { address: bare, family: isIP(bare) as 4 | 6 };
  }
  let answers: { address: string; family: number }[];
  try {
    answers = await lookup(bare);
  } catch (err) {
    throw new RefusedAddressError(`${bare} could not be resolved`, { cause: err });
  }
  if (answers.length === 0) throw new RefusedAddressError(`${bare} could not be resolved`);
  const refused = answers.find((a) => !policy.allows(a.address));
  if (refused) throw new RefusedAddressError(`${bare} resolves to ${refused.address}, which is not a public address`);
  const first = answers[0]!;
  return { address: first.address, family: first.family === 6 ? 6 : 4 };
}

/** The registration check: shape, then DNS. */
export async function checkEndpointUrl(raw: string, policy: AddressPolicy): Promise<URL> {
  const url = checkUrlShape(raw, policy);
  await resolveAllowed(url.hostname, policy);
  return url;
}

/**
 * An undici Agent whose connections go only to allowed addresses: it resolves the host itself, checks every
 * address, and connects to the checked one (TLS still verifies the certificate against the host name). Redirects
 * are never followed (undici follows none unless asked), and each connection is checked when it is made.
 */
export function createGuardedAgent(
  policy: AddressPolicy,
  opts: { connectTimeoutMs: number; connections?: number },
): Agent {
  const connectPinned = buildConnector({ timeout: opts.connectTimeoutMs });
  return new Agent({
    connections: opts.connections ?? null,
    keepAliveTimeout: 10_000,
    connect(options, callback) {
      let handedOver = false;
      // DNS has no timeout of its own here; the connector's timeout starts only once an address is chosen.
      const timer = setTimeout(() => {
        handedOver = true;
        callback(new RefusedAddressError(`resolving ${options.hostname} timed out`), null);
      }, opts.connectTimeoutMs);
      resolveAllowed(options.hostname, policy).then(
        ({ address }) => {
          if (handedOver) return;
          handedOver = true;
          clearTimeout(timer);
          const host = options.hostname.replace(/^\[|\]$/g, '');
          connectPinned({ ...options, hostname: address, servername: isIP(host) ? undefined : host }, callback);
        },
        (err: Error) => {
          if (handedOver) return;
          handedOver = true;
          clearTimeout(timer);
          callback(err, null);
        },
      );
    },
  });
}
