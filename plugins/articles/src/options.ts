import { type SettingDeclarations, setting } from "@vellum/core";

export interface ArticlesOptions {
  /** Path of the article routes. Default `/api/v1/articles`. */
  prefix: string;
  /** Most queued creates the worker applies in one transaction (group commit). Default 256. */
  batchSize: number;
  /** Attempts before a failing create moves to the dead-letter queue. Default 5. */
  maxAttempts: number;
  /** First retry delay in milliseconds, doubled per attempt (±25 % jitter, at most 5 min). Default 1000. */
  retryBaseMs: number;
  /** Path prefix of this service's media, allowed as relative image sources. Default `/media/`. */
  mediaPrefix: string;
  /** HMAC key for list cursors; default: generated once and kept in `<data>/settings/` (0600). */
  cursorSecret?: string;
  /** Creates waiting in the queue above which new creates answer 503 with `Retry-After`. Default 50,000. */
  maxQueued: number;
}

const PATH = /^\/[A-Za-z0-9._~/-]*[A-Za-z0-9._~-]$/;

/** The plugin's settings; none has an environment variable (set them in options or the config file). */
export const ARTICLES_SETTINGS: SettingDeclarations<ArticlesOptions> = {
  prefix: setting.string({
    description: "path of the article routes",
    default: "/api/v1/articles",
    pattern: PATH,
    hint: "must be a path like /api/v1/articles (no trailing slash)",
  }),
  batchSize: setting.integer({
    description: "most queued creates applied in one transaction (group commit)",
    default: 256,
    min: 1,
    max: 10_000,
  }),
  maxAttempts: setting.integer({
    description: "attempts before a failing create moves to the dead-letter queue",
    default: 5,
    min: 1,
    max: 100,
  }),
  retryBaseMs: setting.integer({
    description: "first retry delay in milliseconds, doubled per attempt (±25 % jitter, at most 5 min)",
    default: 1000,
    min: 1,
    max: 300_000,
  }),
  mediaPrefix: setting.string({
    description: "path prefix of this service's media, allowed as relative image sources",
    default: "/media/",
    pattern: /^\//,
    hint: "must be a path starting with /",
  }),
  maxQueued: setting.integer({
    description: "creates waiting in the queue above which new creates answer 503 service_unavailable with Retry-After",
    default: 50_000,
    min: 1,
  }),
  cursorSecret: setting.string({
    description: "HMAC key for list cursors (at least 32 characters)",
    defaultText: "generated into <data>/settings/articles-cursor-secret",
    minLength: 32,
    secret: true,
  }),
};

/** Exponential backoff from `baseMs`, doubling per attempt, capped at five minutes, with ±25 % jitter. */
export function backoff(baseMs: number): (attempt: number) => number {
  return (attempt) => {
    const delay = Math.min(baseMs * 2 ** Math.max(0, attempt - 1), 300_000);
    return Math.round(delay * (0.75 + Math.random() * 0.5));
  };
}
