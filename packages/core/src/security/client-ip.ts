import type { H3Event } from "h3";

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

/**
 * The client IP used for rate limits, lockouts and the `/metrics` loopback check. With
 * `trustProxy` off it is the socket address. With `true` (one hop) or a hop count N, it is the
 * N-th address from the right of `X-Forwarded-For` — the one our own proxy appended — so a client
 * cannot choose its identity by sending the header itself.
 */
export function clientIp(event: H3Event, trustProxy: boolean | number): string {
  const hops = trustProxy === true ? 1 : trustProxy === false ? 0 : trustProxy;
  if (hops > 0) {
    const forwarded = event.req.headers.get("x-forwarded-for");
    if (forwarded) {
      const list = forwarded
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean);
      const picked = list[Math.max(0, list.length - hops)];
      if (picked) return picked;
    }
  }
  return socketAddress(event) ?? "unknown";
}

export function isLoopback(ip: string): boolean {
  return ip === "::1" || ip.startsWith("127.") || ip.startsWith("::ffff:127.");
}
