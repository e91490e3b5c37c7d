import { isIP } from 'node:net';

/**
 * Address ranges a production delivery must never reach: anything that is not a public unicast host
 * on the internet. A webhook URL is chosen by a customer, so without this list the delivery worker
 * would be a proxy into our own network (SSRF). Sources: the IANA IPv4 and IPv6 special-purpose
 * address registries (RFC 6890 and successors).
 */
const FORBIDDEN_V4: ReadonlyArray<readonly [string, number, string]> = [
  ['0.0.0.0', 8, 'unspecified ("this network")'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'shared address space (CGNAT)'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'IETF protocol assignments'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.88.99.0', 24, 'deprecated 6to4 relay anycast'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved (broadcast included)'],
];

const FORBIDDEN_V6: ReadonlyArray<readonly [string, number, string]> = [
  // Covers :: (unspecified), ::1 (loopback) and the deprecated IPv4-compatible addresses.
  ['::', 96, 'unspecified, loopback or IPv4-compatible'],
  ['64:ff9b:1::', 48, 'local-use IPv4/IPv6 translation'],
  ['100::', 64, 'discard-only'],
  // Teredo, benchmarking, ORCHID and other protocol assignments: none hosts a customer's endpoint.
  ['2001::', 23, 'IETF protocol assignments'],
  ['2001:db8::', 32, 'documentation'],
  ['3fff::', 20, 'documentation'],
  ['fc00::', 7, 'unique-local'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'deprecated site-local'],
  ['ff00::', 8, 'multicast'],
];

/** IPv6 prefixes that carry an IPv4 address, judged by that address: offset of its 4 bytes. */
const EMBEDDED_V4: ReadonlyArray<readonly [string, number, number]> = [
  ['::ffff:0:0', 96, 12], // IPv4-mapped
  ['64:ff9b::', 96, 12], // NAT64 well-known prefix: would translate to the IPv4 address
  ['2002::', 16, 2], // 6to4
];

type Range = { bytes: Uint8Array; prefix: number; reason: string };
const V4_RANGES: Range[] = FORBIDDEN_V4.map(([a, prefix, reason]) => ({ bytes: ipv4Bytes(a), prefix, reason }));
const V6_RANGES: Range[] = FORBIDDEN_V6.map(([a, prefix, reason]) => ({ bytes: ipv6Bytes(a), prefix, reason }));
const V6_EMBEDDING = EMBEDDED_V4.map(([a, prefix, offset]) => ({ bytes: ipv6Bytes(a), prefix, offset }));

/**
 * Why `address` (IPv4, IPv6 with or without brackets or a zone, IPv4-mapped IPv6) must not be
 * reached by a production delivery, or undefined when it is a public address. Anything that is not
 * an IP address cannot be vetted and is refused.
 */
export function forbiddenAddressReason(address: string): string | undefined {
  if (typeof address !== 'string') return 'not an IP address';
  let text = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const zone = text.indexOf('%');
  if (zone !== -1) text = text.slice(0, zone); // a zone only appears on link-local addresses
  const version = isIP(text);
  if (version === 4) return reasonV4(ipv4Bytes(text));
  if (version !== 6) return 'not an IP address';
  const bytes = ipv6Bytes(text);
  for (const { bytes: prefix, prefix: length, offset } of V6_EMBEDDING) {
    if (inPrefix(bytes, prefix, length)) {
      const reason = reasonV4(bytes.subarray(offset, offset + 4));
      return reason && `${reason} (embedded IPv4)`;
    }
  }
  return V6_RANGES.find((range) => inPrefix(bytes, range.bytes, range.prefix))?.reason;
}

/**
 * Whether a resolved IP address (v4, v6, v4-mapped v6) is one a production delivery must never
 * reach. Called at delivery time on every address DNS returned, because a host name that looked
 * public when the subscription was made can later resolve to 127.0.0.1 (DNS rebinding).
 */
export function isForbiddenDeliveryAddress(address: string): boolean {
  return forbiddenAddressReason(address) !== undefined;
}

function reasonV4(bytes: Uint8Array): string | undefined {
  return V4_RANGES.find((range) => inPrefix(bytes, range.bytes, range.prefix))?.reason;
}

function inPrefix(bytes: Uint8Array, prefix: Uint8Array, length: number): boolean {
  for (let bit = 0; bit < length; bit += 8) {
    const take = Math.min(8, length - bit);
    const mask = (0xff << (8 - take)) & 0xff;
    const i = bit / 8;
    if ((bytes[i] & mask) !== (prefix[i] & mask)) return false;
  }
  return true;
}

/** Bytes of a dotted-quad IPv4 address already validated by isIP. */
function ipv4Bytes(text: string): Uint8Array {
  return Uint8Array.from(text.split('.').map(Number));
}

/** The 16 bytes of an IPv6 address already validated by isIP (`::` and a dotted IPv4 tail allowed). */
function ipv6Bytes(text: string): Uint8Array {
  let source = text;
  const lastColon = source.lastIndexOf(':');
  if (source.includes('.', lastColon)) {
    const v4 = ipv4Bytes(source.slice(lastColon + 1));
    source = `${source.slice(0, lastColon + 1)}${((v4[0] << 8) | v4[1]).toString(16)}:${((v4[2] << 8) | v4[3]).toString(16)}`;
  }
  const [head, tail] = source.includes('::') ? source.split('::') : [source, undefined];
  const groups = (part: string | undefined) => (part ? part.split(':').map((g) => parseInt(g, 16)) : []);
  const front = groups(head);
  const back = groups(tail);
  const all = tail === undefined ? front : [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
  const bytes = new Uint8Array(16);
  all.forEach((group, i) => {
    bytes[2 * i] = group >> 8;
    bytes[2 * i + 1] = group & 0xff;
  });
  return bytes;
}
