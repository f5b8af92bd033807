import { API_ERROR_DESCRIPTIONS, ApiError, type ApiErrorCode } from "../errors/api-error.js";
import type { JobRecord } from "./types.js";

/**
 * The code a client may learn of a job's failure: that of an `ApiError` the handler threw on
 * purpose (a conflict, a validation), else `internal_error`. The raw error stays in the log and
 * in the job row for operators.
 */
export function publicJobErrorCode(error: unknown): ApiErrorCode {
  return ApiError.is(error) ? error.code : "internal_error";
}

/** The `error` of `GET /api/v1/jobs/:id`: the stored code and a generic message for it. */
export function jobErrorBody(code: string | null, status: "queued" | "failed"): { code: string; message: string } {
  const known =
    code !== null && Object.hasOwn(API_ERROR_DESCRIPTIONS, code) ? (code as ApiErrorCode) : "internal_error";
  if (known !== "internal_error") return { code: known, message: API_ERROR_DESCRIPTIONS[known] };
  const message =
    status === "failed"
      ? "The write failed after its retries and is in the dead-letter queue; the error was logged."
      : "The last attempt failed and the write will be retried; the error was logged.";
  return { code: known, message };
}

/** Exponential from about one second, doubling per attempt, capped at five minutes, with ±25 % jitter. */
export function defaultBackoffMs(attempt: number): number {
  const base = Math.min(1000 * 2 ** Math.max(0, attempt - 1), 300_000);
  return Math.round(base * (0.75 + Math.random() * 0.5));
}

/** The most of an error's message a job row keeps. */
const MAX_ERROR_LENGTH = 2000;

/** The raw message of a job's failure, for its row and the log (never a client). */
export function errorMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.length > MAX_ERROR_LENGTH ? `${message.slice(0, MAX_ERROR_LENGTH)}…` : message;
}

/** A failed attempt as the worker recorded it: dead-lettered, or retried in `retryInMs`. */
export interface JobFailure {
  job: JobRecord;
  error: unknown;
  dead: boolean;
  retryInMs: number;
}
