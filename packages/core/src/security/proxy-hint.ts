import { BlockList, isIP } from "node:net";
import type { ConsolaInstance } from "consola";

/** Loopback and private ranges: where a reverse proxy in front of Vellum usually sits. */
const PROXY_RANGES = new BlockList();
for (const [network, prefix] of [
  ["127.0.0.0", 8],
  ["10.0.0.0", 8],
  ["172.16.0.0", 12],
  ["192.168.0.0", 16],
  ["169.254.0.0", 16],
] as const) {
  PROXY_RANGES.addSubnet(network, prefix, "ipv4");
}
for (const [network, prefix] of [
  ["::1", 128],
  ["fc00::", 7],
  ["fe80::", 10],
] as const) {
  PROXY_RANGES.addSubnet(network, prefix, "ipv6");
}

function fromProxyRange(address: string): boolean {
  const mapped = address.startsWith("::ffff:") ? address.slice(7) : address;
  const family = isIP(mapped);
  return family !== 0 && PROXY_RANGES.check(mapped, family === 4 ? "ipv4" : "ipv6");
}

/**
 * With trust-proxy off, warns once when a request carrying `X-Forwarded-For` arrives from a
 * loopback or private address: a reverse proxy is most likely in front, and then every client
 * shares the proxy's address for rate limits and lockouts.
 */
export function createProxyHint(logger: ConsolaInstance): (peer: string | undefined, forwarded: string | null) => void {
  let warned = false;
  return (peer, forwarded) => {
    if (warned || forwarded === null || peer === undefined || !fromProxyRange(peer)) return;
    warned = true;
    logger.warn(
      `requests carry X-Forwarded-For from ${peer} while SERVICE_TRUST_PROXY is off: behind a reverse proxy, every client shares its address for rate limits and lockouts; set SERVICE_TRUST_PROXY to the proxies' addresses (loopback, uniquelocal, a CIDR list) or their number`,
    );
  };
}
