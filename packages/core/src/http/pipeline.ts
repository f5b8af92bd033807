import type { ConsolaInstance } from "consola";
import { getCookie, type H3Event, HTTPError, toResponse } from "h3";
import { FastResponse } from "srvx/node";
import { ApiError } from "../errors/api-error.js";
import { storageFailure, storageFailureError } from "../errors/storage-failure.js";
import type { VellumHookBus } from "../hooks/hooks.js";
import { createKeyVerifier, presentedKey } from "../security/api-key.js";
import { clientIp, socketAddress } from "../security/client-ip.js";
import { CSRF_COOKIE, CSRF_HEADER, type CsrfTokens, csrfMatches } from "../security/csrf.js";
import type { LockoutTracker } from "../security/lockout.js";
import { createProxyHint } from "../security/proxy-hint.js";
import { type RateLimitStore, takeToken } from "../security/rate-limit.js";
import type { TrustProxy } from "../security/trust-proxy.js";
import { thenNow } from "../then-now.js";
import type { CorsPolicy } from "./cors.js";
import { codeForStatus, errorResponse } from "./envelope.js";
import { isReply, Reply } from "./json.js";
import { addResponseHeaders, kernelHeaders } from "./kernel-headers.js";
import { mountPrefix } from "./mount.js";
import type { RequestObserver } from "./observe.js";
import { requestId, resolveRequestId } from "./request-id.js";
import { effectiveAuth, matchedRoute, type RouteMeta, type RouteTable } from "./routes.js";

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
  /** Compiled once by `createVellum` (`compileTrustProxy`). */
  trustProxy: TrustProxy;
  features: ReadonlySet<string>;
  logger: ConsolaInstance;
  observe: RequestObserver;
  secureCookies: boolean;
  /** The path of `baseUrl`: the mount prefix when the host does not tell (see `mountPrefix`). */
  basePath: string;
  debug: boolean;
  reportError(error: unknown, event: H3Event): void;
  bus: VellumHookBus;
}

const JSON_CONTENT = { "content-type": "application/json; charset=utf-8" } as const;

function isPlainJson(value: unknown): value is object {
  if (value === null || typeof value !== "object") return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null || Array.isArray(value);
}

/** A handler's plain JSON value as its reply, with the status the handler set on the event. */
const jsonReply = (event: H3Event, value: object) =>
  new Reply(JSON.stringify(value), event.res.status ?? 200, JSON_CONTENT);

/**
 * The kernel's request pipeline as h3 `onRequest` / middleware / `onError`. Every response leaves
 * through `complete` (the middleware) or `onError`, which add the kernel's headers and record the
 * request, so h3 needs no `onResponse` hook and its promise chain per request.
 */
export function createPipeline(deps: PipelineDeps) {
  const verifyKey = createKeyVerifier(deps.apiKey);
  const proxyHint = createProxyHint(deps.logger);

  async function authenticate(event: H3Event, meta: RouteMeta): Promise<void> {
    const ip = clientIp(event, deps.trustProxy);
    const retryAfter = await deps.lockout.retryAfterSeconds(ip);
    if (retryAfter > 0) {
      throw new ApiError("locked_out", "Too many failed authentications from this address.", {
        headers: { "retry-after": String(retryAfter) },
      });
    }
    const presented = presentedKey(event.req.headers, meta.apiKeyHeader === true);
    if (presented === undefined || !verifyKey(presented)) {
      // Only a key that was presented and is wrong counts (contract §4): anonymous traffic sharing
      // the key holder's address (a NAT, a proxy) must not lock the key holder out.
      if (presented !== undefined) await deps.lockout.recordFailure(ip);
      throw new ApiError("unauthorized", "A valid API key is required: send Authorization: Bearer <key>.", {
        headers: { "www-authenticate": "Bearer" },
      });
    }
  }

  /**
   * Routing, readiness, CORS preflight and the route's guards, then the handler. Synchronous
   * unless a guard or the handler waits: each promise and microtask here costs every request.
   */
  function middleware(event: H3Event, next: () => unknown): unknown {
    const route = matchedRoute(event);
    const meta = route?.meta;
    if (deps.state() !== "ready" && !meta?.probe) {
      throw new ApiError("service_unavailable", "The service is not ready.", { headers: { "retry-after": "1" } });
    }
    const preflight = deps.cors.preflight(event.req);
    if (preflight) return complete(event, preflight);
    if (!route) {
      const allowed = deps.routes.allowed(event.url.pathname);
      if (allowed.length === 0) throw new ApiError("not_found", "No such route.");
      if (event.req.method === "OPTIONS") {
        return complete(event, new Response(null, { status: 204, headers: { allow: allowed.join(", ") } }));
      }
      throw new ApiError("method_not_allowed", `Use one of: ${allowed.join(", ")}.`, {
        headers: { allow: allowed.join(", ") },
      });
    }
    if (meta?.feature && !deps.features.has(meta.feature)) throw new ApiError("not_found", "No such route.");
    const auth = effectiveAuth(event.req.method, meta ?? {});
    if (auth.key || meta?.rateLimit) return guarded(event, meta ?? {}, auth, next);
    checkCsrf(event, auth.csrf);
    return handle(event, next);
  }

  /** The key, then the CSRF token, then the rate limit: the guards that ask a store. */
  async function guarded(event: H3Event, meta: RouteMeta, auth: { key: boolean; csrf: boolean }, next: () => unknown) {
    if (auth.key) await authenticate(event, meta);
    checkCsrf(event, auth.csrf);
    // Counted once the key and the CSRF token hold, so anonymous requests from a shared address
    // cannot spend the key holder's budget of a rate-limited write (the purge endpoint).
    if (meta.rateLimit) {
      const outcome = await takeToken(deps.store, meta.rateLimit, clientIp(event, deps.trustProxy));
      const headers: Record<string, string> = {
        "ratelimit-limit": String(outcome.limit),
        "ratelimit-remaining": String(outcome.remaining),
        "ratelimit-reset": String(outcome.resetSeconds),
      };
      if (!outcome.allowed) {
        headers["retry-after"] = String(outcome.resetSeconds);
        throw new ApiError("rate_limited", "Too many requests; slow down.", { headers });
      }
      addResponseHeaders(event, headers);
    }
    return handle(event, next);
  }

  function checkCsrf(event: H3Event, required: boolean): void {
    if (required && !csrfMatches(deps.csrf(), getCookie(event, CSRF_COOKIE), event.req.headers.get(CSRF_HEADER))) {
      throw new ApiError("csrf_failed", "Send the svc_csrf cookie value in the X-CSRF-Token header.");
    }
  }

  /**
   * The handler, with the `http:request` / `http:reply` / `http:response` hooks around it, each
   * paid for only when some plugin subscribes.
   */
  function handle(event: H3Event, next: () => unknown): unknown {
    if (!deps.bus.hasSubscribers("http:request")) return thenNow(next(), (value) => replyHooks(event, value));
    const before: { event: H3Event; response?: Response } = { event };
    return thenNow(deps.bus.serial("http:request", before), () =>
      before.response ? complete(event, before.response) : thenNow(next(), (value) => replyHooks(event, value)),
    );
  }

  function replyHooks(event: H3Event, value: unknown): unknown {
    const reply = deps.bus.hasSubscribers("http:reply") ? replied(event, value) : value;
    if (!deps.bus.hasSubscribers("http:response")) return thenNow(reply, (value) => complete(event, value));
    return thenNow(reply, (value) => responseHook(event, value));
  }

  /** A handler's `Reply` or plain JSON value through `http:reply`; anything else as it is. */
  function replied(event: H3Event, value: unknown): unknown {
    const reply = isReply(value) ? value : isPlainJson(value) ? jsonReply(event, value) : undefined;
    if (!reply) return value;
    const payload = { event, reply };
    return thenNow(deps.bus.serial("http:reply", payload), () => payload.reply);
  }

  async function responseHook(event: H3Event, value: unknown): Promise<Response> {
    const result = toKernelResponse(event, value);
    const after = { event, response: result instanceof Response ? result : await toResponse(result, event) };
    await deps.bus.serial("http:response", after);
    return complete(event, after.response);
  }

  /**
   * Turns a handler's `Reply` or plain JSON value into the final response with the kernel's
   * headers in the same plain object (srvx then writes it without `Headers` or streams). A
   * `Response` gets the headers added; other values (a string, a stream) go through h3 first.
   */
  function toKernelResponse(event: H3Event, value: unknown): Response | Promise<Response> {
    const meta = matchedRoute(event)?.meta;
    if (isReply(value)) {
      event.context.kernelHeadersApplied = true;
      const headers = kernelHeaders(deps, event, meta, value.headers);
      // Set here, not by the Node adapter: h3 drops a HEAD's body, and `vellum.fetch` answers a web Response.
      if (value.body !== null) headers["content-length"] = String(Buffer.byteLength(value.body));
      return new FastResponse(value.body, { status: value.status, headers });
    }
    if (isPlainJson(value)) return toKernelResponse(event, jsonReply(event, value));
    if (value instanceof Response) return withKernelHeaders(event, value);
    return Promise.resolve(toResponse(value, event)).then((response) => withKernelHeaders(event, response));
  }

  function withKernelHeaders(event: H3Event, response: Response): Response {
    if (event.context.kernelHeadersApplied) return response;
    event.context.kernelHeadersApplied = true;
    for (const [k, v] of Object.entries(kernelHeaders(deps, event, matchedRoute(event)?.meta))) {
      if (k === "set-cookie") response.headers.append(k, v);
      else if (!response.headers.has(k) || k === "x-request-id") response.headers.set(k, v);
    }
    return response;
  }

  /** The response as sent, with the kernel's headers, recorded in metrics and the access log. */
  function complete(event: H3Event, value: unknown): Response | Promise<Response> {
    const response = toKernelResponse(event, value);
    if (response instanceof Response) return observed(event, response);
    return response.then((r) => observed(event, r));
  }

  function observed(event: H3Event, response: Response): Response {
    deps.observe({
      method: event.req.method,
      route: matchedRoute(event)?.route ?? "unmatched",
      pathname: event.url.pathname,
      status: response.status,
      startedAt: event.context.startedAt as number | undefined,
      requestId: requestId(event),
    });
    return response;
  }

  function onRequest(event: H3Event): void {
    event.context.requestId = resolveRequestId(event.req.headers.get("x-request-id"));
    event.context.startedAt = performance.now();
    if (deps.basePath) event.context.basePath = deps.basePath;
    if (proxyHint.pending && deps.trustProxy.description === false) {
      proxyHint.check(socketAddress(event), event.req.headers.get("x-forwarded-for"));
    }
  }

  function onError(error: HTTPError, event: H3Event): Response {
    // h3 rejects a path it cannot decode before `onRequest` runs: give it an id and a start too.
    if (event.context.requestId === undefined) onRequest(event);
    const id = requestId(event);
    const base = kernelHeaders(deps, event, matchedRoute(event)?.meta);
    const original = error.cause !== undefined && error.unhandled ? error.cause : error;
    const api = ApiError.is(original)
      ? original
      : ApiError.is(error)
        ? error
        : original instanceof URIError
          ? new ApiError("invalid_parameter", "The path has a malformed percent-escape.")
          : undefined;
    const respond = (api: ApiError) => {
      const headers = Object.assign({}, api.headers, base);
      const options = { details: api.details, headers, prefix: mountPrefix(event) };
      return observed(event, errorResponse(api.code, api.message, id, options));
    };
    if (api) return respond(api);
    if (HTTPError.isError(error) && !error.unhandled && error.status < 500) {
      const message = error.message || "The request was not accepted.";
      const options = { headers: base, prefix: mountPrefix(event) };
      return observed(event, errorResponse(codeForStatus(error.status), message, id, options));
    }
    deps.reportError(original, event);
    const failure = storageFailure(original);
    if (failure) return respond(storageFailureError(failure));
    const message = deps.debug && original instanceof Error ? original.message : "An unexpected error occurred.";
    return observed(event, errorResponse("internal_error", message, id, { headers: base, prefix: mountPrefix(event) }));
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

  return { middleware, onRequest, onError, checkKey };
}
