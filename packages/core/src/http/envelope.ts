import { FastResponse } from "srvx/node";
import { API_ERROR_STATUS, type ApiErrorCode, type ApiErrorDetail } from "../errors/api-error.js";

const JSON_CONTENT_TYPE = { "content-type": "application/json; charset=utf-8" } as const;

/** Builds the contract's error response: `{"error":{code,message,request_id,docs,details?}}`. */
export function errorResponse(
  code: ApiErrorCode,
  message: string,
  requestId: string,
  options: { details?: ApiErrorDetail[]; headers?: Record<string, string>; prefix?: string } = {},
): Response {
  const docs = `${options.prefix ?? ""}/docs/api/errors#${code}`;
  const error: Record<string, unknown> = { code, message, request_id: requestId, docs };
  if (options.details?.length) error.details = options.details;
  return new FastResponse(JSON.stringify({ error }), {
    status: API_ERROR_STATUS[code],
    // By assignment: in Node 20's V8, a literal that spreads an object and then adds a key gets a
    // hidden class of its own every time, slow to build and to read (docs/benchmarks.md).
    headers: Object.assign({}, options.headers, JSON_CONTENT_TYPE),
  });
}

const CODE_FOR_STATUS: Partial<Record<number, ApiErrorCode>> = {
  400: "invalid_parameter",
  401: "unauthorized",
  403: "forbidden",
  404: "not_found",
  405: "method_not_allowed",
  413: "payload_too_large",
  415: "unsupported_media_type",
  429: "rate_limited",
  503: "service_unavailable",
};

/** Maps a bare HTTP status (from h3 or a library) to the contract code that owns it. */
export function codeForStatus(status: number): ApiErrorCode {
  return CODE_FOR_STATUS[status] ?? "internal_error";
}
