/** The codes of Vellum's error envelope (contract §3), plus the client's own `unexpected_response`. */
export type VellumErrorCode =
  | "invalid_slug"
  | "invalid_json"
  | "validation_failed"
  | "invalid_parameter"
  | "invalid_cursor"
  | "unauthorized"
  | "csrf_failed"
  | "forbidden"
  | "not_found"
  | "method_not_allowed"
  | "slug_conflict"
  | "payload_too_large"
  | "unsupported_media_type"
  | "invalid_media"
  | "locked_out"
  | "rate_limited"
  | "internal_error"
  | "service_unavailable"
  | "storage_quota_exceeded"
  /** The answer was not what Vellum sends: no error envelope, or a success body that is not JSON (a proxy's page). */
  | "unexpected_response";

/** One field of a `validation_failed` error. */
export interface ErrorDetail {
  field: string;
  message: string;
}

/** The base class of every error this client throws. */
export class VellumError extends Error {
  override name = "VellumError";
}

export interface VellumApiErrorInit {
  status: number;
  /** A code of the envelope; a newer server may send one this client does not know. */
  code: VellumErrorCode | (string & {});
  message: string;
  requestId: string | null;
  details?: ErrorDetail[];
  retryAfter?: number;
  docs?: string;
}

/** The service (or something in front of it) answered with an error status or a body that is not Vellum's. */
export class VellumApiError extends VellumError {
  override name = "VellumApiError";
  /** HTTP status of the answer. */
  readonly status: number;
  readonly code: VellumErrorCode | (string & {});
  /** The envelope's `request_id`, else the `X-Request-Id` header; `null` when neither came. */
  readonly requestId: string | null;
  /** Per-field problems of a `validation_failed`. */
  readonly details: ErrorDetail[] | undefined;
  /** Seconds to wait, from `Retry-After` (429, 503). */
  readonly retryAfter: number | undefined;
  /** The envelope's `docs` link (`/docs/api/errors#<code>`). */
  readonly docs: string | undefined;

  constructor(init: VellumApiErrorInit) {
    super(init.message);
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId;
    this.details = init.details;
    this.retryAfter = init.retryAfter;
    this.docs = init.docs;
  }
}

/** No answer came: DNS, refused or reset connection, TLS, a body cut short. `cause` is what `fetch` threw. */
export class VellumNetworkError extends VellumError {
  override name = "VellumNetworkError";

  constructor(
    readonly method: string,
    readonly url: string,
    cause: unknown,
  ) {
    super(`${method} ${url} failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/** A queued write ended in the dead-letter queue (`GET /api/v1/jobs/:id` said `failed`). */
export class VellumJobFailedError extends VellumError {
  override name = "VellumJobFailedError";

  constructor(
    readonly jobId: string,
    /** The job's `error.code` (`internal_error` unless the write was refused on purpose). */
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** A queued write was still `queued` when the wait's `timeoutMs` ran out; it may still be applied later. */
export class VellumTimeoutError extends VellumError {
  override name = "VellumTimeoutError";

  constructor(
    readonly jobId: string,
    readonly timeoutMs: number,
  ) {
    super(`job ${jobId} was not applied within ${timeoutMs} ms`);
  }
}
