import { json as jsonResponse } from "@vellum/core";

/** A JSON response that no cache keeps: health answers must always be fresh. */
export function json(body: unknown, status = 200): Response {
  return jsonResponse(body, { status, headers: { "cache-control": "no-store" } });
}
