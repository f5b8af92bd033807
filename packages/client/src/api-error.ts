import { type ErrorDetail, VellumApiError } from "./errors.js";

interface Envelope {
  code: string;
  message: string;
  request_id?: unknown;
  details?: unknown;
  docs?: unknown;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null;

/** The `error` of Vellum's envelope, or `undefined` when the text is not one (a proxy's HTML, a truncated body). */
function parseEnvelope(text: string): Envelope | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  const error = isRecord(body) ? body.error : undefined;
  if (!isRecord(error) || typeof error.code !== "string" || typeof error.message !== "string") return undefined;
  return error as unknown as Envelope;
}

function parseDetails(value: unknown): ErrorDetail[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.filter(
    (d): d is ErrorDetail => isRecord(d) && typeof d.field === "string" && typeof d.message === "string",
  );
}

/** `Retry-After` in seconds: delta-seconds, or an HTTP date counted from now. */
export function parseRetryAfter(header: string | null, now = Date.now()): number | undefined {
  if (header === null) return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/** The error for an answer that is not a success: Vellum's envelope when it is one, else `unexpected_response`. */
export function apiError(res: Response, text: string): VellumApiError {
  const envelope = parseEnvelope(text);
  if (!envelope) return unexpectedResponse(res, "is not Vellum's error envelope");
  return new VellumApiError({
    status: res.status,
    code: envelope.code,
    message: envelope.message,
    requestId: typeof envelope.request_id === "string" ? envelope.request_id : res.headers.get("x-request-id"),
    details: parseDetails(envelope.details),
    retryAfter: parseRetryAfter(res.headers.get("retry-after")),
    docs: typeof envelope.docs === "string" ? envelope.docs : undefined,
  });
}

/** An answer in no shape Vellum sends: the status, the content type and why, never the body itself. */
export function unexpectedResponse(res: Response, why: string): VellumApiError {
  const type = res.headers.get("content-type") ?? "no content type";
  return new VellumApiError({
    status: res.status,
    code: "unexpected_response",
    message: `HTTP ${res.status} ${res.statusText}`.trim() + ` (${type}): the body ${why}`,
    requestId: res.headers.get("x-request-id"),
    retryAfter: parseRetryAfter(res.headers.get("retry-after")),
  });
}
