import type { ConsolaInstance } from "consola";
import { compileTrustProxy } from "./trust-proxy.js";

/** Loopback and private ranges: where a reverse proxy in front of Vellum usually sits. */
const PROXY_RANGES = compileTrustProxy(["loopback", "linklocal", "uniquelocal"]);

export interface ProxyHint {
  /** True until the warning was given: requests need no look at their headers after that. */
  readonly pending: boolean;
  check(peer: string | undefined, forwarded: string | null): void;
}

/**
 * With trust-proxy off, warns once when a request carrying `X-Forwarded-For` arrives from a
 * loopback or private address: a reverse proxy is most likely in front, and then every client
 * shares the proxy's address for rate limits and lockouts.
 */
export function createProxyHint(logger: ConsolaInstance): ProxyHint {
  let pending = true;
  return {
    get pending() {
      return pending;
    },
    check(peer, forwarded) {
      if (!pending || forwarded === null || peer === undefined || !PROXY_RANGES.trusts(peer, 0)) return;
      pending = false;
      logger.warn(
        `requests carry X-Forwarded-For from ${peer} while SERVICE_TRUST_PROXY is off: behind a reverse proxy, every client shares its address for rate limits and lockouts; set SERVICE_TRUST_PROXY to the proxies' addresses (loopback, uniquelocal, a CIDR list) or their number`,
      );
    },
  };
}
