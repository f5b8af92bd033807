/**
 * The client-facing error catalogue of contract §3. Every HTTP error Vellum sends maps to exactly
 * one of these codes; the status is fixed by the code so handlers cannot drift from the contract.
 */
export const API_ERROR_STATUS = {
  invalid_slug: 400,
  invalid_json: 400,
  validation_failed: 400,
  invalid_parameter: 400,
  invalid_cursor: 400,
  unauthorized: 401,
  csrf_failed: 403,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  slug_conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  invalid_media: 422,
  locked_out: 429,
  rate_limited: 429,
  internal_error: 500,
  service_unavailable: 503,
  storage_quota_exceeded: 507,
} as const;

export type ApiErrorCode = keyof typeof API_ERROR_STATUS;

/** Describes each code for the `/docs/api/errors` page and `docs/errors.md`. */
export const API_ERROR_DESCRIPTIONS: Record<ApiErrorCode, string> = {
  invalid_slug: "The slug must be lowercase alphanumeric with hyphens or underscores, 1 to 200 characters.",
  invalid_json: "The request body is not valid JSON, or not a JSON object.",
  validation_failed: "A field is missing, of the wrong type, or over a limit; `details` names each field.",
  invalid_parameter: "A query parameter is out of range (`limit`, `offset`, `q`).",
  invalid_cursor: "The cursor was not issued by this service.",
  unauthorized: "The API key is missing or wrong. Send `Authorization: Bearer <key>`.",
  csrf_failed: "The `X-CSRF-Token` header is missing or does not match a valid `svc_csrf` cookie.",
  forbidden: "This resource is not available to this client (for example `/metrics` from outside).",
  not_found: "No such article, job, media item or route.",
  method_not_allowed: "The route exists but not for this method; see the `Allow` header.",
  slug_conflict: "Another article already has this slug, or a queued write claims it.",
  payload_too_large: "The body is over the size limit (2 MiB for JSON, the upload cap for media).",
  unsupported_media_type: "The `Content-Type` is not accepted here, or an upload's bytes are not an allowed type.",
  invalid_media: "The upload could not be decoded as an image of an allowed kind.",
  locked_out: "Too many failed authentications from this client; retry after `Retry-After` seconds.",
  rate_limited: "Too many requests; retry after `Retry-After` seconds.",
  internal_error: "Something unexpected failed. The request id is in the server log.",
  service_unavailable: "The service is starting, shutting down, overloaded, or a required component is down.",
  storage_quota_exceeded: "The upload would exceed the storage quota.",
};

export interface ApiErrorDetail {
  field: string;
  message: string;
}

export interface ApiErrorOptions {
  details?: ApiErrorDetail[];
  headers?: Record<string, string>;
  cause?: unknown;
}

/** An error meant for the client: thrown by handlers and middleware, rendered as the envelope. */
export class ApiError extends Error {
  override readonly name = "ApiError";
  readonly code: ApiErrorCode;
  readonly status: number;
  readonly details: ApiErrorDetail[] | undefined;
  readonly headers: Record<string, string>;

  constructor(code: ApiErrorCode, message: string, options: ApiErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = API_ERROR_STATUS[code];
    this.details = options.details;
    this.headers = options.headers ?? {};
  }

  /** Duck-typed check so a second copy of @vellum/core in a host app still matches. */
  static is(value: unknown): value is ApiError {
    return (
      value instanceof Error &&
      value.name === "ApiError" &&
      typeof (value as ApiError).code === "string" &&
      (value as ApiError).code in API_ERROR_STATUS
    );
  }
}

export function validationFailed(details: ApiErrorDetail[]): ApiError {
  const first = details[0];
  const message = first ? `${first.field}: ${first.message}` : "The request is not valid.";
  return new ApiError("validation_failed", message, { details });
}
