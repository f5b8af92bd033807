import type { ConsolaInstance } from "consola";
import { getCookie, type H3Event, HTTPError, toResponse } from "h3";
import { ApiError } from "../errors/api-error.js";
import type { VellumHookBus } from "../hooks/hooks.js";
import type { CoreMetrics } from "../metrics/core-metrics.js";
import { createKeyVerifier, presentedKey } from "../security/api-key.js";
import { clientIp } from "../security/client-ip.js";
import { CSRF_COOKIE, CSRF_HEADER, type CsrfTokens, csrfMatches } from "../security/csrf.js";
import type { LockoutTracker } from "../security/lockout.js";
import { type RateLimitStore, takeToken } from "../security/rate-limit.js";
import type { CorsPolicy } from "./cors.js";
import { codeForStatus, errorResponse } from "./envelope.js";
import { requestId, resolveRequestId } from "./request-id.js";
import { effectiveAuth, type RouteMeta, type RouteTable } from "./routes.js";
import { SECURITY_HEADERS } from "./security-headers.js";

export type KeyCheck = { result: "ok" | "missing" | "wrong" } | { result: "locked_out"; retryAfterSeconds: number };

export type LifecycleState = "created" | "starting" | "ready" | "closing" | "closed";

export interface PipelineDeps {
  state(): LifecycleState;
  routes: RouteTable;
  cors: CorsPolicy;
  store: RateLimitStore;
  lockout: LockoutTracker;
  apiKey: string | undefined;
  /** Available once the instance has initialised (the secret may come from storage). */
  csrf(): CsrfTokens | undefined;
  trustProxy: boolean | number;
  features: ReadonlySet<string>;
  metrics: CoreMetrics;
  logger: ConsolaInstance;
  accessLog: boolean;
  secureCookies: boolean;
  debug: boolean;
  reportError(error: unknown, event: H3Event): void;
  bus: VellumHookBus;
}

interface MatchedRoute {
  route: string;
  meta?: RouteMeta & { plugin?: string };
}

const matched = (event: H3Event) => event.context.matchedRoute as MatchedRoute | undefined;

function deprecationHeaders(meta: RouteMeta | undefined): Record<string, string> {
  if (!meta?.deprecated) return {};
  const sunset = new Date(meta.deprecated.sunset);
  const headers: Record<string, string> = { deprecation: "true", sunset: sunset.toUTCString() };
  if (meta.deprecated.link) headers.link = `<${meta.deprecated.link}>; rel="deprecation"`;
  return headers;
}

/** The kernel's request pipeline as h3 `onRequest` / middleware / `onError` / `onResponse`. */
export function createPipeline(deps: PipelineDeps) {
  const verifyKey = createKeyVerifier(deps.apiKey);

  async function authenticate(event: H3Event, meta: RouteMeta): Promise<void> {
    const ip = clientIp(event, deps.trustProxy);
    const retryAfter = await deps.lockout.retryAfterSeconds(ip);
    if (retryAfter > 0) {
      throw new ApiError("locked_out", "Too many failed authentications from this address.", {
        headers: { "retry-after": String(retryAfter) },
      });
    }
    if (!verifyKey(presentedKey(event.req.headers, meta.apiKeyHeader === true))) {
      await deps.lockout.recordFailure(ip);
      throw new ApiError("unauthorized", "A valid API key is required: send Authorization: Bearer <key>.", {
        headers: { "www-authenticate": "Bearer" },
      });
    }
  }

  function checkCsrf(event: H3Event): void {
    const tokens = deps.csrf();
    const header = event.req.headers.get(CSRF_HEADER);
    if (!tokens || !csrfMatches(tokens, getCookie(event, CSRF_COOKIE), header)) {
      throw new ApiError("csrf_failed", "Send the svc_csrf cookie value in the X-CSRF-Token header.");
    }
  }

  async function middleware(event: H3Event, next: () => unknown): Promise<unknown> {
    const route = matched(event);
    const meta = route?.meta;
    if (deps.state() !== "ready" && !meta?.probe) {
      throw new ApiError("service_unavailable", "The service is not ready.", { headers: { "retry-after": "1" } });
    }
    const preflight = deps.cors.preflight(event.req);
    if (preflight) return preflight;
    if (!route) {
      const allowed = deps.routes.allowed(event.url.pathname);
      if (allowed.length === 0) throw new ApiError("not_found", "No such route.");
      if (event.req.method === "OPTIONS")
        return new Response(null, { status: 204, headers: { allow: allowed.join(", ") } });
      throw new ApiError("method_not_allowed", `Use one of: ${allowed.join(", ")}.`, {
        headers: { allow: allowed.join(", ") },
      });
    }
    if (meta?.feature && !deps.features.has(meta.feature)) throw new ApiError("not_found", "No such route.");
    if (meta?.rateLimit) {
      const outcome = await takeToken(deps.store, meta.rateLimit, clientIp(event, deps.trustProxy));
      const headers = {
        "ratelimit-limit": String(outcome.limit),
        "ratelimit-remaining": String(outcome.remaining),
        "ratelimit-reset": String(outcome.resetSeconds),
      };
      if (!outcome.allowed) {
        throw new ApiError("rate_limited", "Too many requests; slow down.", {
          headers: { ...headers, "retry-after": String(outcome.resetSeconds) },
        });
      }
      for (const [k, v] of Object.entries(headers)) event.res.headers.set(k, v);
    }
    const auth = effectiveAuth(event.req.method, meta ?? {});
    if (auth.key) await authenticate(event, meta ?? {});
    if (auth.csrf) checkCsrf(event);
    if (!deps.bus.hasSubscribers("http:request") && !deps.bus.hasSubscribers("http:response")) return next();
    return aroundHandler(event, next);
  }

  /** The `http:request` / `http:response` hooks, only paid for when some plugin subscribes. */
  async function aroundHandler(event: H3Event, next: () => unknown): Promise<unknown> {
    const before: { event: H3Event; response?: Response } = { event };
    await deps.bus.call("http:request", before);
    if (before.response) return before.response;
    const response = await toResponse(await next(), event);
    const after = { event, response };
    await deps.bus.call("http:response", after);
    return after.response;
  }

  function onRequest(event: H3Event): void {
    event.context.requestId = resolveRequestId(event.req.headers.get("x-request-id"));
    event.context.startedAt = performance.now();
  }

  function onError(error: HTTPError, event: H3Event): Response {
    const id = requestId(event);
    const original = error.cause !== undefined && error.unhandled ? error.cause : error;
    if (ApiError.is(original)) {
      return errorResponse(original.code, original.message, id, {
        details: original.details,
        headers: original.headers,
      });
    }
    if (ApiError.is(error)) return errorResponse(error.code, error.message, id, { headers: error.headers });
    if (HTTPError.isError(error) && !error.unhandled && error.status < 500) {
      return errorResponse(codeForStatus(error.status), error.message || "The request was not accepted.", id);
    }
    deps.reportError(original, event);
    const message = deps.debug && original instanceof Error ? original.message : "An unexpected error occurred.";
    return errorResponse("internal_error", message, id);
  }

  function onResponse(response: Response, event: H3Event): void {
    const headers = response.headers;
    const meta = matched(event)?.meta;
    headers.set("x-request-id", requestId(event));
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) headers.set(k, v);
    for (const [k, v] of Object.entries(deprecationHeaders(meta))) headers.set(k, v);
    const cors = deps.cors.headersFor(event.req.headers.get("origin"));
    if (cors) for (const [k, v] of Object.entries(cors)) if (!headers.has(k)) headers.set(k, v);
    const tokens = deps.csrf();
    if (tokens && (event.req.method === "GET" || event.req.method === "HEAD")) {
      if (!tokens.verify(getCookie(event, CSRF_COOKIE))) {
        const secure = deps.secureCookies ? "; Secure" : "";
        headers.append("set-cookie", `${CSRF_COOKIE}=${tokens.issue()}; Path=/; SameSite=Strict${secure}`);
      }
    }
    const status = `${Math.floor(response.status / 100)}xx`;
    const labels = { method: event.req.method, route: matched(event)?.route ?? "unmatched", status };
    const seconds = (performance.now() - (event.context.startedAt as number)) / 1000;
    deps.metrics.requests.inc(labels);
    deps.metrics.duration.observe(labels, seconds);
    if (deps.accessLog) {
      deps.logger.info(
        `${event.req.method} ${event.url.pathname} ${response.status} ${(seconds * 1000).toFixed(1)}ms ${requestId(event)}`,
      );
    }
  }

  /** For routes that check the key themselves: counts failures and honours lockouts like writes do. */
  async function checkKey(event: H3Event): Promise<KeyCheck> {
    const ip = clientIp(event, deps.trustProxy);
    const retryAfter = await deps.lockout.retryAfterSeconds(ip);
    if (retryAfter > 0) return { result: "locked_out", retryAfterSeconds: retryAfter };
    const presented = presentedKey(event.req.headers, true);
    if (presented === undefined) return { result: "missing" };
    if (verifyKey(presented)) return { result: "ok" };
    await deps.lockout.recordFailure(ip);
    return { result: "wrong" };
  }

  return { middleware, onRequest, onError, onResponse, checkKey };
}
