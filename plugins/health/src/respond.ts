import { json as jsonReply, type Reply } from "@vellum/core";

/** A JSON reply that no intermediary may store: health answers must always be fresh. */
export function json(body: unknown, status = 200): Reply {
  return jsonReply(body, { status, headers: { "cache-control": "no-store" } });
}
