import { type SettingDeclarations, type SettingProblem, setting } from "@vellum/core";

export interface CacheOptions {
  /** Most responses the local cache holds. Default 10,000. */
  maxEntries: number;
  /** Most bytes of responses (bodies and headers) the local cache holds. Default 64 MB. */
  maxBytes: number;
  /** Largest single response it keeps; larger ones are served with validators but not held. Default 1 MB. */
  maxEntryBytes: number;
  /** `s-maxage` of article reads: seconds a shared cache (a CDN) may serve them without asking. Default 60. */
  sharedMaxAge: number;
  /** `stale-while-revalidate` of article reads: seconds a shared cache may serve a stale copy while it refetches. Default 30. */
  staleWhileRevalidate: number;
  /** Purges forwarded to a CDN: the URL that receives a signed POST with the purged tags. Default: none. */
  cdnPurgeUrl?: string;
  /** HMAC-SHA256 key that signs forwarded purges (required with `cdnPurgeUrl`). */
  cdnPurgeSecret?: string;
  /** Attempts to forward one purge before it moves to the dead-letter queue. Default 8. */
  cdnMaxAttempts: number;
}

const MB = 1024 * 1024;

function httpUrlProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "must be an absolute http(s) URL";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return "must be an http(s) URL";
  if (url.username || url.password) return "must not carry credentials (sign with SERVICE_CACHE_PURGE_SECRET instead)";
  return undefined;
}

export const CACHE_SETTINGS: SettingDeclarations<CacheOptions> = {
  maxEntries: setting.integer({
    env: "CACHE_MAX_ENTRIES",
    description: "most responses the local response cache holds (0 turns the local cache off)",
    default: 10_000,
    min: 0,
    max: 10_000_000,
  }),
  maxBytes: setting.amount({
    env: "CACHE_MAX_MB",
    description: "most megabytes of responses the local response cache holds",
    default: 64 * MB,
    unit: "MB",
    scale: MB,
    max: 65_536,
  }),
  maxEntryBytes: setting.amount({
    env: "CACHE_MAX_ENTRY_MB",
    description: "largest single response the local cache keeps, in megabytes",
    default: MB,
    unit: "MB",
    scale: MB,
    max: 1024,
  }),
  sharedMaxAge: setting.integer({
    env: "CACHE_S_MAXAGE",
    description: "s-maxage of article reads: seconds a CDN may serve them without revalidating",
    default: 60,
    min: 0,
    max: 31_536_000,
  }),
  staleWhileRevalidate: setting.integer({
    env: "CACHE_STALE_WHILE_REVALIDATE",
    description: "stale-while-revalidate of article reads: seconds a CDN may serve a stale copy while refetching",
    default: 30,
    min: 0,
    max: 31_536_000,
  }),
  cdnPurgeUrl: setting.string({
    env: "CACHE_CDN_PURGE_URL",
    description: "URL that receives each purge as a signed POST with its tags (off when unset)",
    pattern: /^https?:\/\//i,
    hint: "must be an http(s) URL",
  }),
  cdnPurgeSecret: setting.string({
    env: "SERVICE_CACHE_PURGE_SECRET",
    description: "HMAC-SHA256 key that signs forwarded purges (at least 16 characters)",
    minLength: 16,
    secret: true,
  }),
  cdnMaxAttempts: setting.integer({
    env: "CACHE_CDN_MAX_ATTEMPTS",
    description: "attempts to forward one purge before it moves to the dead-letter queue",
    default: 8,
    min: 1,
    max: 100,
  }),
};

/** Rules between settings: a purge URL needs its secret, and must be a plain http(s) URL. */
export function checkCacheSettings(options: Readonly<CacheOptions>): SettingProblem[] {
  const problems: SettingProblem[] = [];
  if (options.cdnPurgeUrl !== undefined) {
    const problem = httpUrlProblem(options.cdnPurgeUrl);
    if (problem) problems.push({ setting: "cdnPurgeUrl", message: problem });
    if (options.cdnPurgeSecret === undefined) {
      problems.push({ setting: "cdnPurgeSecret", message: "is required when CACHE_CDN_PURGE_URL is set" });
    }
  }
  if (options.maxEntryBytes > options.maxBytes) {
    problems.push({ setting: "maxEntryBytes", message: "must not be larger than CACHE_MAX_MB" });
  }
  return problems;
}
