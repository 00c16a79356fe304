import dns from 'node:dns';
import net, { type LookupFunction } from 'node:net';
import { isForbiddenAddress } from './address-guard';

/**
 * The guard of every request the server makes to a URL a client gave (a URL upload, a webhook
 * delivery): the host it connects to must not be this host or a private network unless the
 * instance allows it by name. Exports the allow-list key of a URL (`hostKey`), the check of a
 * host written as an address or as `localhost` (`refusedHost`), the name lookup that checks the
 * address it answers at connect time (`guardedLookup`), and how its refusal is recognised
 * (`isGuardRefusal`). Used by core's webhooks and by `@entity-records/files`.
 */

const REFUSED = Symbol('refused address');

/** A host as an allow-list names it: lower case, IPv6 without brackets. */
export const hostKey = (url: URL): string => url.hostname.toLowerCase().replace(/^\[|\]$/g, '');

/** An allow-list as given by the host (names or addresses, any case, IPv6 with or without brackets). */
export const allowedHostSet = (hosts: readonly string[] = []): ReadonlySet<string> =>
  new Set(hosts.map((h) => h.trim().toLowerCase().replace(/^\[|\]$/g, '')).filter(Boolean));

/**
 * Why the host of `url` is refused before any connection (an address literal of a private range,
 * or `localhost` and its subdomains, which always mean this host: RFC 6761), or undefined.
 */
export function refusedHost(url: URL, allowedHosts: ReadonlySet<string>): string | undefined {
  const key = hostKey(url);
  if (allowedHosts.has(key)) return undefined;
  if (net.isIP(key) && isForbiddenAddress(key)) return `host ${url.hostname} is a private or reserved address`;
  if (/(^|\.)localhost\.?$/.test(key)) return `host ${url.hostname} is this host`;
  return undefined;
}

/** Whether a request failed because the guarded lookup refused the address a name resolved to. */
export const isGuardRefusal = (error: unknown): boolean => typeof error === 'object' && error !== null && (error as { [REFUSED]?: boolean })[REFUSED] === true;

/**
 * The name lookup a connection uses: the address it answers is the one connected to, so the
 * check holds at connect time (a host that resolves differently the second time cannot slip past).
 */
export function guardedLookup(resolve: LookupFunction = dns.lookup as unknown as LookupFunction): LookupFunction {
  return ((hostname: string, options: dns.LookupOptions, callback: (...args: unknown[]) => void) => {
    resolve(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error);
      const list = addresses as unknown as dns.LookupAddress[];
      const bad = list.find((a) => isForbiddenAddress(a.address));
      if (bad || list.length === 0) {
        const refusal = Object.assign(new Error(`${hostname} resolves to a private or reserved address`), { [REFUSED]: true });
        return callback(refusal);
      }
      if (options.all) return callback(null, list);
      return callback(null, list[0].address, list[0].family);
    });
  }) as LookupFunction;
}

/** The lookup a request to `url` connects with: the guarded one unless the host is allowed. */
export function lookupFor(url: URL, { allowedHosts, lookup }: { allowedHosts: ReadonlySet<string>; lookup?: LookupFunction }): LookupFunction {
  const resolve = lookup ?? (dns.lookup as unknown as LookupFunction);
  return allowedHosts.has(hostKey(url)) ? resolve : guardedLookup(resolve);
}
