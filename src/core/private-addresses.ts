import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { BlockList, isIP } from "node:net";

/** Addresses a webhook may not reach unless WEBHOOKS_ALLOW_PRIVATE=true: private, loopback, link-local and the like. */
const privateRanges = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const)
  privateRanges.addSubnet(net, prefix, "ipv4");
for (const [net, prefix] of [
  ["::", 128],
  ["::1", 128],
  ["fc00::", 7],
  ["fe80::", 10],
  ["ff00::", 8],
  ["64:ff9b::", 96],
] as const)
  privateRanges.addSubnet(net, prefix, "ipv6");

/** True for an address a webhook may not reach by default (IPv4-mapped IPv6 addresses are judged as IPv4). */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return privateRanges.check(mapped[1], "ipv4");
  const family = isIP(address);
  if (family === 0) return true;
  return privateRanges.check(address, family === 4 ? "ipv4" : "ipv6");
}

export class PrivateTargetError extends Error {
  override name = "PrivateTargetError";
}

/**
 * DNS lookup that refuses private addresses: the address checked is the one connected to, so a host name that
 * resolves (or is re-pointed) to a private address is refused too.
 */
export function guardedLookup(allowPrivate: boolean): typeof dnsLookup {
  return ((
    hostname: string,
    options: object,
    callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void,
  ) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, "");
      const list = addresses;
      const allowed = allowPrivate ? list : list.filter((a) => !isPrivateAddress(a.address));
      if (!allowed.length) return callback(new PrivateTargetError(`${hostname} resolves to a private address`), "");
      if ((options as { all?: boolean }).all) return callback(null, allowed);
      callback(null, allowed[0].address, allowed[0].family);
    });
  }) as typeof dnsLookup;
}

/** How long validating a webhook URL waits for its name to resolve (it runs inside the write's transaction). */
const VALIDATION_LOOKUP_MS = 1000;

/** The host names' addresses a URL reaches: for validating a webhook URL before it is stored. */
export async function resolvesToPrivate(url: URL): Promise<boolean> {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (isIP(host)) return isPrivateAddress(host);
  let timer: NodeJS.Timeout | undefined;
  const addresses = await Promise.race([
    new Promise<LookupAddress[]>((resolve) =>
      dnsLookup(host, { all: true }, (error, list) => resolve(error ? [] : list)),
    ),
    new Promise<LookupAddress[]>((resolve) => (timer = setTimeout(() => resolve([]), VALIDATION_LOOKUP_MS))),
  ]).finally(() => clearTimeout(timer));
  // A name that does not resolve now (or not in time) may later: the address is checked again on every delivery.
  return addresses.some((a) => isPrivateAddress(a.address));
}
