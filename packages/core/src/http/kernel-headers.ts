import { getCookie, type H3Event } from "h3";
import { CSRF_COOKIE, type CsrfTokens } from "../security/csrf.js";
import type { CorsPolicy } from "./cors.js";
import { mountPrefix } from "./mount.js";
import { requestId } from "./request-id.js";
import type { RouteMeta } from "./routes.js";
import { SECURITY_HEADERS } from "./security-headers.js";

const NOSNIFF = SECURITY_HEADERS["x-content-type-options"] as string;
const NO_REFERRER = SECURITY_HEADERS["referrer-policy"] as string;
const DENY = SECURITY_HEADERS["x-frame-options"] as string;

export interface KernelHeaderDeps {
  cors: CorsPolicy;
  csrf(): CsrfTokens | undefined;
  secureCookies: boolean;
}

function deprecation(meta: RouteMeta | undefined, into: Record<string, string>): void {
  if (!meta?.deprecated) return;
  into.deprecation = "true";
  into.sunset = new Date(meta.deprecated.sunset).toUTCString();
  if (meta.deprecated.link) into.link = `<${meta.deprecated.link}>; rel="deprecation"`;
}

/** Headers a route's middleware adds on the way in (rate-limit counters), sent with the response. */
export function addResponseHeaders(event: H3Event, headers: Record<string, string>): void {
  event.context.extraHeaders = Object.assign(
    (event.context.extraHeaders as Record<string, string> | undefined) ?? {},
    headers,
  );
}

/**
 * Every header the kernel adds to a response (contract §3, §4, §10): request id, security
 * headers, deprecation, CORS, rate-limit counters and, on GETs of routes that hand it out
 * (`meta.csrfCookie`) without a valid one, a fresh `svc_csrf` cookie. One plain object per request: the handler's own headers (`own`) first, the
 * kernel's over them. Built as one literal, so every response's header object has the same shape.
 */
export function kernelHeaders(
  deps: KernelHeaderDeps,
  event: H3Event,
  meta: RouteMeta | undefined,
  own?: Readonly<Record<string, string>>,
): Record<string, string> {
  const headers: Record<string, string> = {
    "x-content-type-options": NOSNIFF,
    "referrer-policy": NO_REFERRER,
    "x-frame-options": DENY,
    "x-request-id": requestId(event),
  };
  if (own) for (const key in own) if (!(key in headers)) headers[key] = own[key] as string;
  if (meta?.deprecated) deprecation(meta, headers);
  const cors = deps.cors.headersFor(event.req.headers.get("origin"));
  if (cors) Object.assign(headers, cors);
  const extra = event.context.extraHeaders as Record<string, string> | undefined;
  if (extra) Object.assign(headers, extra);
  if (meta?.csrfCookie === true) {
    const tokens = deps.csrf();
    const method = event.req.method;
    if (tokens && (method === "GET" || method === "HEAD") && !tokens.verify(getCookie(event, CSRF_COOKIE))) {
      const token = (event.context.csrfToken as string | undefined) ?? tokens.issue();
      const path = mountPrefix(event) || "/";
      headers["set-cookie"] =
        `${CSRF_COOKIE}=${token}; Path=${path}; SameSite=Strict${deps.secureCookies ? "; Secure" : ""}`;
    }
  }
  return headers;
}
