/**
 * Who sends the `svc_csrf` cookie on a write:
 * - `manual`: the client sets the `Cookie` header itself (Node, Deno, Bun, workers: no cookie jar);
 * - `browser`: requests go with `credentials: "include"` and the browser sends its cookie (a page cannot set the
 *   forbidden `Cookie` header); the client only sets `X-CSRF-Token`.
 */
export type CookieMode = "manual" | "browser";

export interface ClientOptions {
  /** Where Vellum answers, with its mount prefix if any: `http://127.0.0.1:3000`, `https://example.com/cms`. */
  baseUrl: string | URL;
  /** The API key, sent as `Authorization: Bearer` on writes only. Reads need none. */
  apiKey?: string;
  /** Default: `browser` where a `document` or `WorkerGlobalScope` exists, else `manual`. */
  cookies?: CookieMode;
  /** The `fetch` to use (a framework's, an instrumented one). Default: the global `fetch` at call time. */
  fetch?: typeof globalThis.fetch;
}

/** `browser` in a page or a web worker, where the runtime keeps cookies and forbids the `Cookie` header. */
export function defaultCookieMode(scope: object = globalThis): CookieMode {
  return "document" in scope || "WorkerGlobalScope" in scope ? "browser" : "manual";
}

/** What every call takes: aborting the signal rejects the call with the signal's reason. */
export interface RequestOptions {
  signal?: AbortSignal;
}
