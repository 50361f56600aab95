import { BlockList, isIP } from 'node:net';

/**
 * The SSRF guard's rules: webhook URLs are https and every address they resolve to must be public, unless the
 * operator allows http or allowlists a range. No I/O here: ssrf.ts resolves the names and connects, and runs these
 * rules at registration and again when connecting, on the address the connection then uses (pinned), so a DNS
 * answer that changes in between (rebinding) is caught.
 */
export interface AddressPolicy {
  allowHttp: boolean;
  /** True when the address may be connected to: public, or inside an allowlisted range. */
  allows(address: string): boolean;
}

/** Ranges that are not the public Internet: loopback, private, CGNAT, link-local (cloud metadata), reserved. */
const NON_PUBLIC_V4 = [
  ['0.0.0.0', 8], // "this network"; 0.0.0.0 reaches the local host
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // CGNAT (also Alibaba's metadata 100.100.100.200)
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, incl. 169.254.169.254 metadata
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, incl. broadcast
] as const;
const NON_PUBLIC_V6 = [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96], // NAT64 could reach any IPv4, private included
  ['64:ff9b:1::', 48],
  ['100::', 64], // discard
  ['2001::', 32], // Teredo
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4
  ['fc00::', 7], // unique local (incl. fd00:ec2::254 metadata)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const;

// IPv4-mapped addresses (::ffff:0:0/96) are not listed: normaliseAddress turns them into the IPv4 address they
// carry, which is judged by the IPv4 rules (and BlockList would match every IPv4 address against such a rule).
const nonPublic = new BlockList();
for (const [net, bits] of NON_PUBLIC_V4) nonPublic.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of NON_PUBLIC_V6) nonPublic.addSubnet(net, bits, 'ipv6');

/** An IPv4-mapped IPv6 address (::ffff:127.0.0.1, ::ffff:7f00:1) is the IPv4 address it carries. */
export function normaliseAddress(address: string): { address: string; family: 'ipv4' | 'ipv6' } | null {
  const bare = address.replace(/^\[|\]$/g, '');
  const version = isIP(bare);
  if (version === 4) return { address: bare, family: 'ipv4' };
  if (version !== 6) return null;
  const canonical = new URL(`http://[${bare}]/`).hostname.slice(1, -1).toLowerCase();
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
  if (mapped) {
    const hi = parseInt(mapped[1]!, 16);
    const lo = parseInt(mapped[2]!, 16);
    return { address: `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`, family: 'ipv4' };
  }
  const dotted = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(canonical);
  if (dotted) return { address: dotted[1]!, family: 'ipv4' };
  return { address: canonical, family: 'ipv6' };
}

export function isPublicAddress(address: string): boolean {
  const n = normaliseAddress(address);
  return n !== null && !nonPublic.check(n.address, n.family);
}

/** APP_ENV=development allows http and loopback unless told otherwise; elsewhere nothing but public https. */
export function createAddressPolicy(opts: {
  appEnv: string;
  allowHttp?: boolean;
  allowedCidrs?: string;
}): AddressPolicy {
  const development = opts.appEnv === 'development';
  const cidrs = (opts.allowedCidrs ?? (development ? '127.0.0.0/8,::1/128' : ''))
    .split(',')
    .map((c) => c.trim())
    .filter(Boolean);
  const allowed = new BlockList();
  for (const cidr of cidrs) {
    const [net, bitsText] = cidr.split('/');
    const n = normaliseAddress(net ?? '');
    const bits = bitsText === undefined ? (n?.family === 'ipv4' ? 32 : 128) : Number(bitsText);
    if (!n || !Number.isInteger(bits) || bits < 0 || bits > (n.family === 'ipv4' ? 32 : 128)) {
      throw new Error(`WEBHOOK_ALLOWED_CIDRS: ${JSON.stringify(cidr)} is not a CIDR`);
    }
    allowed.addSubnet(n.address, bits, n.family);
  }
  return {
    allowHttp: opts.allowHttp ?? development,
    allows(address) {
      const n = normaliseAddress(address);
      if (!n) return false;
      return allowed.check(n.address, n.family) || !nonPublic.check(n.address, n.family);
    },
  };
}

export class RefusedAddressError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'RefusedAddressError';
  }
}

/** Checks what can be checked without DNS; returns the parsed URL or throws RefusedAddressError with the reason. */
export function checkUrlShape(raw: string, policy: AddressPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch (err) {
    throw new RefusedAddressError('must be an absolute URL', { cause: err });
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp)) {
    throw new RefusedAddressError(policy.allowHttp ? 'must be an http or https URL' : 'must be an https URL');
  }
  if (url.username || url.password) throw new RefusedAddressError('must not carry credentials');
  if (url.hash) throw new RefusedAddressError('must not have a #fragment');
  if (!url.hostname) throw new RefusedAddressError('must name a host');
  return url;
}
