import type { H3Event } from "h3";
import { isIP } from "node:net";
import { compileTrustProxy, isCompiledTrustProxy, type TrustProxy, type TrustProxySetting } from "./trust-proxy.js";

const assigned = new WeakMap<Request, string>();

/** Lets in-process callers (`vellum.fetch(req, { clientAddress })`) say who the client is. */
export function assignClientAddress(request: Request, address: string): void {
  assigned.set(request, address);
}

/** The address of the socket peer (or the one an in-process caller assigned). */
export function socketAddress(event: H3Event): string | undefined {
  const req = event.req as Request & { ip?: string };
  return assigned.get(event.req) ?? req.ip;
}

/** Compiled settings: lists by identity, plain values by value (a handful per process). */
const compiledLists = new WeakMap<readonly string[], TrustProxy>();
const compiledValues = new Map<boolean | number | string, TrustProxy>();
const MAX_COMPILED_VALUES = 64;

function compiled(trust: TrustProxySetting | TrustProxy | undefined): TrustProxy {
  if (isCompiledTrustProxy(trust)) return trust;
  if (trust === undefined) return compileTrustProxy(false);
  if (Array.isArray(trust)) {
    const list = trust as readonly string[];
    let found = compiledLists.get(list);
    if (!found) compiledLists.set(list, (found = compileTrustProxy(list)));
    return found;
  }
  const value = trust as boolean | number | string;
  let found = compiledValues.get(value);
  if (!found) {
    found = compileTrustProxy(value);
    if (compiledValues.size >= MAX_COMPILED_VALUES) compiledValues.clear();
    compiledValues.set(value, found);
  }
  return found;
}

/**
 * The client IP used for rate limits, lockouts and the `/metrics` loopback check, under
 * `security.trustProxy` (a setting, or one compiled by `compileTrustProxy`; see `TrustProxySetting`).
 *
 * It is the socket address unless the socket peer is a trusted proxy. Then `X-Forwarded-For` is
 * walked from the right: each entry is taken while the address before it (the peer, then the
 * entries already taken) is trusted, as proxy-addr does. An entry that is not an IP address
 * (`net.isIP`) ends the walk at the last trusted hop, so a junk or oversized header never becomes
 * a client IP. With a hop count `n`, the peer and the `n - 1` entries right of the client are
 * trusted whatever their addresses.
 */
export function clientIp(event: H3Event, trust: TrustProxySetting | TrustProxy | undefined): string {
  let address = socketAddress(event) ?? "unknown";
  const rule = compiled(trust);
  if (rule.description === false) return address;
  const header = event.req.headers.get("x-forwarded-for");
  if (!header) return address;
  let end = header.length;
  for (let hop = 0; end >= 0 && rule.trusts(address, hop); hop++) {
    const comma = header.lastIndexOf(",", end - 1);
    const entry = header.slice(comma + 1, end).trim();
    if (isIP(entry) === 0) break;
    address = entry;
    end = comma;
  }
  return address;
}

export function isLoopback(ip: string): boolean {
  return ip === "::1" || ip.startsWith("127.") || ip.startsWith("::ffff:127.");
}
