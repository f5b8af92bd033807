import { FastResponse } from "srvx/node";
import { API_ERROR_STATUS, type ApiErrorCode, type ApiErrorDetail } from "../errors/api-error.js";

export interface ErrorEnvelope {
  error: {
    code: ApiErrorCode;
    message: string;
    request_id: string;
    docs: string;
    details?: ApiErrorDetail[];
  };
}

/** Builds the contract's error response: `{"error":{code,message,request_id,docs,details?}}`. */
export function errorResponse(
  code: ApiErrorCode,
  message: string,
  requestId: string,
  options: { details?: ApiErrorDetail[]; headers?: Record<string, string> } = {},
): Response {
  const body: ErrorEnvelope = {
    error: { code, message, request_id: requestId, docs: `/docs/api/errors#${code}` },
  };
  if (options.details?.length) body.error.details = options.details;
  return new FastResponse(JSON.stringify(body), {
    status: API_ERROR_STATUS[code],
    headers: { ...options.headers, "content-type": "application/json; charset=utf-8" },
  });
}

/** Maps a bare HTTP status (from h3 or a library) to the contract code that owns it. */
export function codeForStatus(status: number): ApiErrorCode {
  switch (status) {
    case 400:
      return "invalid_parameter";
    case 401:
      return "unauthorized";
    case 403:
      return "forbidden";
    case 404:
      return "not_found";
    case 405:
      return "method_not_allowed";
    case 413:
      return "payload_too_large";
    case 415:
      return "unsupported_media_type";
    case 429:
      return "rate_limited";
    case 503:
      return "service_unavailable";
    default:
      return "internal_error";
  }
}
