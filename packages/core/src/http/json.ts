import { FastResponse } from "srvx/node";

/**
 * A JSON response. Uses srvx's FastResponse, which Node's adapter writes without building a web
 * stream (a plain `new Response()` costs several times more per request); in-process callers
 * still get a standard `Response` interface.
 */
export function json(body: unknown, init: { status?: number; headers?: Record<string, string> } = {}): Response {
  return new FastResponse(JSON.stringify(body), {
    status: init.status ?? 200,
    headers: { "content-type": "application/json; charset=utf-8", ...init.headers },
  });
}

/** A text response (Prometheus exposition, CSV, …) on the same fast path; set `content-type`. */
export function text(body: string, init: { status?: number; headers: Record<string, string> }): Response {
  return new FastResponse(body, { status: init.status ?? 200, headers: init.headers });
}
