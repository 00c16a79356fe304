import net from 'node:net';

/** IPv4 ranges an outgoing request (URL download, webhook) must not reach: this host, private networks, link-local, multicast, reserved. */
const IPV4_BLOCKED: [string, number][] = [
  ['0.0.0.0', 8], // "this network", including the unspecified address
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // shared address space (carrier-grade NAT)
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved and broadcast
];

/** IPv6 ranges refused outright (those embedding an IPv4 address are judged by that address). */
const IPV6_BLOCKED: [string, number][] = [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['100::', 64], // discard
  ['2001:db8::', 32], // documentation
  ['2001::', 32], // Teredo: the real address is hidden inside
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
];

function ipv4ToInt(address: string): number {
  return address.split('.').reduce((n, part) => n * 256 + Number(part), 0);
}

/** The 16 bytes of an IPv6 address as a bigint; a zone (`%eth0`) is ignored. */
function ipv6ToBigInt(address: string): bigint {
  let text = address.split('%')[0].toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const v4 = ipv4ToInt(dotted[1]);
    text = `${text.slice(0, -dotted[1].length)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  return groups.reduce((n, g) => (n << 16n) | BigInt(parseInt(g || '0', 16)), 0n);
}

const inV4 = (value: number, [base, bits]: [string, number]) =>
  bits === 0 || value >>> (32 - bits) === ipv4ToInt(base) >>> (32 - bits);
const inV6 = (value: bigint, [base, bits]: [string, number]) =>
  value >> BigInt(128 - bits) === ipv6ToBigInt(base) >> BigInt(128 - bits);

/** An IPv4 address carried inside an IPv6 one: mapped, translated, compatible, NAT64 or 6to4. */
function embeddedIpv4(value: bigint): number | undefined {
  const low32 = Number(value & 0xffffffffn);
  if (value >> 32n === 0xffffn) return low32; // ::ffff:a.b.c.d
  if (value >> 32n === 0xffff0000n) return low32; // ::ffff:0:a.b.c.d ("translated", SIIT)
  if (value >> 32n === 0n) return low32; // ::a.b.c.d (deprecated "compatible" form)
  if (value >> 32n === ipv6ToBigInt('64:ff9b::') >> 32n) return low32; // NAT64
  if (value >> 80n === ipv6ToBigInt('64:ff9b:1::') >> 80n) return low32; // NAT64 for local use (/48)
  if (value >> 112n === 0x2002n) return Number((value >> 80n) & 0xffffffffn); // 6to4
  return undefined;
}

/**
 * Whether an outgoing request (a URL download, a webhook delivery) must not connect to this address: loopback, private, link-local,
 * multicast, unspecified or reserved, in IPv4, IPv6 and IPv4-in-IPv6 forms. Anything that is not
 * an IP address at all is refused too.
 */
export function isForbiddenAddress(address: string): boolean {
  if (net.isIPv4(address)) {
    const value = ipv4ToInt(address);
    return IPV4_BLOCKED.some((range) => inV4(value, range));
  }
  if (net.isIPv6(address)) {
    const value = ipv6ToBigInt(address);
    const v4 = embeddedIpv4(value);
    if (v4 !== undefined && !(value === 0n || value === 1n)) return IPV4_BLOCKED.some((range) => inV4(v4 >>> 0, range));
    return IPV6_BLOCKED.some((range) => inV6(value, range));
  }
  return true;
}
