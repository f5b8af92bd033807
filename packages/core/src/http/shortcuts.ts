import type { IncomingMessage, ServerResponse } from "node:http";
import type { H3Event } from "h3";
import type { CorsPolicy } from "./cors.js";
import type { RequestObserver } from "./observe.js";
import { resolveRequestId } from "./request-id.js";
import { SECURITY_HEADERS } from "./security-headers.js";

/** A GET or HEAD as a shortcut sees it: before routing, so only what the request itself says. */
export interface ShortcutRequest {
  readonly method: "GET" | "HEAD";
  /** Path and query exactly as received, e.g. `/api/v1/articles?limit=5`. */
  readonly url: string;
  /** A request header by its lower-case name. */
  header(name: string): string | undefined;
}

/** The scheme and authority of an absolute URL, leaving its path and query. */
const ORIGIN = /^[a-z][a-z0-9+.-]*:\/\/[^/?]*/i;

/**
 * The `url` a shortcut is given for this request, so a plugin can key what it prepares in a
 * handler the way its shortcut will look it up: the request-target as the Node listener received
 * it (before URL parsing escapes `'` or `"`), or the path and query of a Fetch API request.
 */
export function requestTarget(event: H3Event): string {
  const node = (event.runtime as { node?: { req?: { url?: string } } } | undefined)?.node;
  return node?.req?.url ?? event.url.href.replace(ORIGIN, "");
}

/** A response prepared once and sent as is; the kernel adds its per-request headers. */
export interface PreparedResponse {
  readonly status: number;
  /**
   * `[name, value, name, value, …]` with lower-case names, without what the kernel adds to every
   * response: the security headers, `x-request-id`, CORS and `content-length`.
   */
  readonly headers: readonly string[];
  /** Omitted for a bodiless status (304). */
  readonly body?: Uint8Array;
  /** The route pattern it answers for, recorded in metrics and the access log. */
  readonly route: string;
}

/**
 * Answers a GET or HEAD before routing, or returns undefined to let the request take the normal
 * path. No authentication, rate limit, hook or handler runs for what a shortcut answers, so it
 * must only answer what a public route would: how a response cache serves its hits.
 */
export type Shortcut = (request: ShortcutRequest) => PreparedResponse | undefined;

export interface ShortcutDeps {
  ready(): boolean;
  cors: CorsPolicy;
  observe: RequestObserver;
  report(error: unknown, plugin: string): void;
}

const SECURITY_PAIRS = Object.entries(SECURITY_HEADERS).flat();

/**
 * A request header by lower-case name, read from `rawHeaders`: Node builds `req.headers` only when
 * asked, which a hit would otherwise pay for. Repeated headers are joined as Node joins them.
 */
function rawHeader(raw: readonly string[], name: string): string | undefined {
  let found: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const key = raw[i] as string;
    if (key.length === name.length && key.toLowerCase() === name) {
      found = found === undefined ? raw[i + 1] : `${found}, ${raw[i + 1]}`;
    }
  }
  return found;
}

/** The shortcuts plugins registered, tried in order by the Node listener and by `fetch`. */
export class Shortcuts {
  readonly #deps: ShortcutDeps;
  readonly #list: Array<{ plugin: string; fn: Shortcut }> = [];
  /** Each prepared response's headers with the security headers and its length, made on its first use. */
  readonly #fixed = new WeakMap<PreparedResponse, string[]>();

  constructor(deps: ShortcutDeps) {
    this.#deps = deps;
  }

  add(plugin: string, fn: Shortcut): void {
    this.#list.push({ plugin, fn });
  }

  /** Answers a Node request with a prepared response; false when none applies. */
  node(req: IncomingMessage, res: ServerResponse): boolean {
    const method = req.method;
    if ((method !== "GET" && method !== "HEAD") || this.#list.length === 0 || !this.#deps.ready()) return false;
    const startedAt = performance.now();
    const raw = req.rawHeaders;
    const url = req.url ?? "/";
    const prepared = this.#find({ method, url, header: (name) => rawHeader(raw, name) });
    if (!prepared) return false;
    const id = resolveRequestId(rawHeader(raw, "x-request-id") ?? null);
    const out = this.#headers(prepared, id, rawHeader(raw, "origin"));
    res.writeHead(prepared.status, out);
    res.end(method === "HEAD" ? undefined : prepared.body);
    this.#observed(method, url, prepared, startedAt, id);
    return true;
  }

  /** The same for a Fetch API request (`vellum.fetch`). */
  fetch(request: Request): Response | undefined {
    const method = request.method;
    if ((method !== "GET" && method !== "HEAD") || this.#list.length === 0 || !this.#deps.ready()) return undefined;
    const startedAt = performance.now();
    const url = request.url.replace(ORIGIN, "");
    const prepared = this.#find({ method, url, header: (name) => request.headers.get(name) ?? undefined });
    if (!prepared) return undefined;
    const id = resolveRequestId(request.headers.get("x-request-id"));
    const flat = this.#headers(prepared, id, request.headers.get("origin") ?? undefined);
    const headers = new Headers();
    for (let i = 0; i < flat.length; i += 2) headers.append(flat[i] as string, flat[i + 1] as string);
    const body = method === "HEAD" || !prepared.body ? null : prepared.body.slice();
    this.#observed(method, url, prepared, startedAt, id);
    return new Response(body, { status: prepared.status, headers });
  }

  #find(request: ShortcutRequest): PreparedResponse | undefined {
    for (const { plugin, fn } of this.#list) {
      try {
        const prepared = fn(request);
        if (prepared) return prepared;
      } catch (error) {
        this.#deps.report(error, plugin);
      }
    }
    return undefined;
  }

  #headers(prepared: PreparedResponse, id: string, origin: string | undefined): string[] {
    let fixed = this.#fixed.get(prepared);
    if (!fixed) {
      fixed = [...SECURITY_PAIRS, ...prepared.headers];
      if (prepared.body) fixed.push("content-length", String(prepared.body.byteLength));
      this.#fixed.set(prepared, fixed);
    }
    const out = fixed.slice();
    out.push("x-request-id", id);
    const cors = origin === undefined ? undefined : this.#deps.cors.headersFor(origin);
    if (cors) for (const name in cors) out.push(name, cors[name] as string);
    return out;
  }

  #observed(method: string, url: string, prepared: PreparedResponse, startedAt: number, id: string): void {
    const query = url.indexOf("?");
    const pathname = query === -1 ? url : url.slice(0, query);
    this.#deps.observe({ method, route: prepared.route, pathname, status: prepared.status, startedAt, requestId: id });
  }
}
