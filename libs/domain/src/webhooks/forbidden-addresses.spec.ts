import fc from 'fast-check';
import { forbiddenAddressReason, isForbiddenDeliveryAddress } from './forbidden-addresses';

const v4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((b) => b.join('.'));
const v4InRange = (base: [number, number, number, number], prefix: number) =>
  fc.nat({ max: 2 ** (32 - prefix) - 1 }).map((offset) => {
    const n = ((base[0] << 24) >>> 0) + (base[1] << 16) + (base[2] << 8) + base[3] + offset;
    return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
  });
/** The IPv4-mapped IPv6 spelling in hex groups, as the URL parser and some resolvers print it. */
const mappedHex = (address: string) => {
  const b = address.split('.').map(Number);
  return `::ffff:${((b[0] << 8) | b[1]).toString(16)}:${((b[2] << 8) | b[3]).toString(16)}`;
};

describe('isForbiddenDeliveryAddress', () => {
  it.each([
    ['0.0.0.0', 'unspecified'],
    ['10.1.2.3', 'private'],
    ['100.64.0.1', 'CGNAT'],
    ['100.127.255.255', 'CGNAT'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['169.254.169.254', 'link-local (cloud metadata)'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['192.0.2.10', 'documentation'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.99', 'documentation'],
    ['198.18.0.1', 'benchmarking'],
    ['224.0.0.251', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback in brackets'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback in hex'],
    ['::ffff:a9fe:a9fe', 'IPv4-mapped metadata'],
    ['::127.0.0.1', 'IPv4-compatible'],
    ['64:ff9b::10.0.0.1', 'NAT64 of a private address'],
    ['2002:7f00:1::', '6to4 of loopback'],
    ['2001::1', 'Teredo'],
    ['2001:db8::1', 'documentation'],
    ['3fff::1', 'documentation'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456::1', 'unique-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local with a zone'],
    ['febf::1', 'link-local'],
    ['fec0::1', 'site-local'],
    ['ff02::1', 'multicast'],
    ['100::1', 'discard-only'],
    ['localhost', 'not an address'],
    ['example.com', 'not an address'],
    ['', 'not an address'],
    ['1.2.3', 'not an address'],
    ['010.0.0.1', 'not an address (octal-looking)'],
  ])('refuses %s (%s)', (address) => {
    expect(isForbiddenDeliveryAddress(address)).toBe(true);
  });

  it.each([
    '1.1.1.1',
    '8.8.8.8',
    '93.184.216.34',
    '100.63.255.255',
    '100.128.0.0',
    '172.15.255.255',
    '172.32.0.0',
    '192.169.0.1',
    '223.255.255.255',
    '2606:4700:4700::1111',
    '2a00:1450:4001:80b::200e',
    '::ffff:8.8.8.8',
    '64:ff9b::8.8.8.8',
    '2002:808:808::1',
    '2001:200::1',
  ])('allows the public address %s', (address) => {
    expect(isForbiddenDeliveryAddress(address)).toBe(false);
  });

  it('names the category', () => {
    expect(forbiddenAddressReason('169.254.169.254')).toBe('link-local');
    expect(forbiddenAddressReason('::ffff:10.0.0.1')).toBe('private (embedded IPv4)');
    expect(forbiddenAddressReason('nonsense')).toBe('not an IP address');
    expect(forbiddenAddressReason('8.8.8.8')).toBeUndefined();
  });

  it('judges an IPv4-mapped IPv6 address exactly like its IPv4 address, in either spelling', () => {
    fc.assert(
      fc.property(v4, (address) => {
        const expected = isForbiddenDeliveryAddress(address);
        expect(isForbiddenDeliveryAddress(`::ffff:${address}`)).toBe(expected);
        expect(isForbiddenDeliveryAddress(mappedHex(address))).toBe(expected);
        expect(isForbiddenDeliveryAddress(`[${mappedHex(address)}]`)).toBe(expected);
      }),
    );
  });

  it('refuses every address of each forbidden IPv4 range', () => {
    const ranges: Array<[[number, number, number, number], number]> = [
      [[0, 0, 0, 0], 8],
      [[10, 0, 0, 0], 8],
      [[100, 64, 0, 0], 10],
      [[127, 0, 0, 0], 8],
      [[169, 254, 0, 0], 16],
      [[172, 16, 0, 0], 12],
      [[192, 168, 0, 0], 16],
      [[224, 0, 0, 0], 4],
      [[240, 0, 0, 0], 4],
    ];
    for (const [base, prefix] of ranges) {
      fc.assert(fc.property(v4InRange(base, prefix), (address) => expect(isForbiddenDeliveryAddress(address)).toBe(true)), {
        numRuns: 50,
      });
    }
  });

  it('refuses every unique-local, link-local and multicast IPv6 address', () => {
    const group = fc.nat(0xffff).map((n) => n.toString(16));
    const tail = fc.array(group, { minLength: 7, maxLength: 7 }).map((g) => g.join(':'));
    const address = fc.oneof(
      fc.tuple(fc.integer({ min: 0xfc00, max: 0xfdff }), tail),
      fc.tuple(fc.integer({ min: 0xfe80, max: 0xfebf }), tail),
      fc.tuple(fc.integer({ min: 0xff00, max: 0xffff }), tail),
    );
    fc.assert(fc.property(address, ([first, rest]) => expect(isForbiddenDeliveryAddress(`${first.toString(16)}:${rest}`)).toBe(true)));
  });

  it('judges any spelling of an IPv6 address like the URL parser\'s canonical spelling of it', () => {
    fc.assert(
      fc.property(fc.ipV6(), (address) => {
        const canonical = new URL(`http://[${address}]/`).hostname;
        expect(isForbiddenDeliveryAddress(address)).toBe(isForbiddenDeliveryAddress(canonical));
        expect(isForbiddenDeliveryAddress(address.toUpperCase())).toBe(isForbiddenDeliveryAddress(address));
      }),
    );
  });

  it('never throws', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.ipV4(), fc.ipV4Extended(), fc.ipV6()), (s) =>
        expect(typeof isForbiddenDeliveryAddress(s)).toBe('boolean'),
      ),
    );
  });
});
