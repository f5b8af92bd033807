import type { H3Event } from "h3";
import { ApiError } from "../errors/api-error.js";

/** Largest JSON body accepted (contract §3). */
export const MAX_JSON_BYTES = 2 * 1024 * 1024;

function isJsonType(contentType: string | null): boolean {
  if (!contentType) return false;
  const type = contentType.split(";")[0]?.trim().toLowerCase() ?? "";
  return type === "application/json" || (type.startsWith("application/") && type.endsWith("+json"));
}

async function readCapped(request: Request, limit: number): Promise<Uint8Array> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) {
    throw new ApiError("payload_too_large", `The body is over the ${limit} byte limit.`);
  }
  if (!request.body) return new Uint8Array();
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      throw new ApiError("payload_too_large", `The body is over the ${limit} byte limit.`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/**
 * Reads a JSON object body: `Content-Type` must be JSON (415), the body at most 2 MiB (413,
 * checked while streaming so an oversize body is never buffered whole), and it must parse to a
 * plain object (400 `invalid_json`).
 */
export async function readJsonBody(event: H3Event, limit = MAX_JSON_BYTES): Promise<Record<string, unknown>> {
  if (!isJsonType(event.req.headers.get("content-type"))) {
    throw new ApiError("unsupported_media_type", "Send the body as application/json.");
  }
  const bytes = await readCapped(event.req, limit);
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    throw new ApiError("invalid_json", "The body is not valid JSON.");
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new ApiError("invalid_json", "The body must be a JSON object.");
  }
  return parsed as Record<string, unknown>;
}
