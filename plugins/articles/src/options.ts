import { optionsInvalid } from "./errors.js";

export interface ArticlesOptions {
  /** Path of the article routes. Default `/api/v1/articles`. */
  prefix: string;
  /** Path of the job status route. Default `/api/v1/jobs`. */
  jobsPrefix: string;
  /** Name of the kernel queue that carries creates. Default `articles`. */
  queue: string;
  /** Most queued creates the worker applies in one transaction (group commit). Default 256. */
  batchSize: number;
  /** Attempts before a failing create moves to the dead-letter queue. Default 5. */
  maxAttempts: number;
  /** First retry delay in milliseconds, doubled per attempt (±25 % jitter, at most 5 min). Default 1000. */
  retryBaseMs: number;
  /** Path prefix of this service's media, allowed as relative image sources. Default `/media/`. */
  mediaPrefix: string;
  /** HMAC key for list cursors; default: generated once and kept in storage `settings:`. */
  cursorSecret?: string;
}

export const ARTICLES_DEFAULTS: ArticlesOptions = {
  prefix: "/api/v1/articles",
  jobsPrefix: "/api/v1/jobs",
  queue: "articles",
  batchSize: 256,
  maxAttempts: 5,
  retryBaseMs: 1000,
  mediaPrefix: "/media/",
};

const PATH = /^\/[A-Za-z0-9._~/-]*[A-Za-z0-9._~-]$/;

function positiveInteger(key: string, value: unknown): void {
  if (!Number.isInteger(value) || (value as number) < 1) throw optionsInvalid([key, "must be a positive integer"]);
}

/** Throws `VELLUM_ARTICLES_OPTIONS_INVALID` naming the first unusable option. */
export function checkOptions(options: Readonly<ArticlesOptions>): void {
  for (const key of ["prefix", "jobsPrefix"] as const) {
    if (typeof options[key] !== "string" || !PATH.test(options[key])) {
      throw optionsInvalid([key, "must be a path like /api/v1/articles (no trailing slash)"]);
    }
  }
  if (typeof options.mediaPrefix !== "string" || !options.mediaPrefix.startsWith("/")) {
    throw optionsInvalid(["mediaPrefix", "must be a path starting with /"]);
  }
  if (typeof options.queue !== "string" || options.queue.length === 0) {
    throw optionsInvalid(["queue", "must be a non-empty string"]);
  }
  positiveInteger("batchSize", options.batchSize);
  positiveInteger("maxAttempts", options.maxAttempts);
  positiveInteger("retryBaseMs", options.retryBaseMs);
  if (
    options.cursorSecret !== undefined &&
    (typeof options.cursorSecret !== "string" || options.cursorSecret.length < 32)
  ) {
    throw optionsInvalid(["cursorSecret", "must be a string of at least 32 characters"]);
  }
}

/** Exponential backoff from `baseMs`, doubling per attempt, capped at five minutes, with ±25 % jitter. */
export function backoff(baseMs: number): (attempt: number) => number {
  return (attempt) => {
    const delay = Math.min(baseMs * 2 ** Math.max(0, attempt - 1), 300_000);
    return Math.round(delay * (0.75 + Math.random() * 0.5));
  };
}
