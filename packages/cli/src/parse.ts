import { type Parsed, parseList, trustEntryProblem } from "@vellum/core";
import { LogLevels } from "consola";

const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
const fail = (problem: string): Parsed<never> => ({ ok: false, problem });

const INTEGER = /^\d+$/;
const MAX_PROXY_HOPS = 32;

export function parsePort(text: string): Parsed<number> {
  const port = Number(text);
  if (!INTEGER.test(text) || port > 65_535) return fail(`'${text}' is not a port number (0-65535)`);
  return ok(port);
}

/** Text that must not be empty (flags, where an empty value is a mistake rather than "unset"). */
export function parseRequired(text: string): Parsed<string> {
  return text.trim() === "" ? fail("a value is required") : ok(text);
}

const TRUE = new Set(["true", "yes", "on"]);
const FALSE = new Set(["false", "no", "off"]);
const TRUST_EXPECTED =
  "false, true, a hop count, or a comma list of loopback, linklocal, uniquelocal, addresses and CIDRs";

/**
 * `false` / `0` (nobody), a hop count, `true` (= `loopback`: one proxy on this host), or a comma list of
 * `loopback`, `linklocal`, `uniquelocal`, IP addresses and CIDRs: the proxies whose `X-Forwarded-For` is believed.
 */
export function parseTrustProxy(text: string): Parsed<false | number | string[]> {
  const trimmed = text.trim();
  if (INTEGER.test(trimmed)) {
    const hops = Number(trimmed);
    if (hops > MAX_PROXY_HOPS) return fail(`${trimmed} is out of range (at most ${MAX_PROXY_HOPS} proxy hops)`);
    return ok(hops === 0 ? false : hops);
  }
  const lower = trimmed.toLowerCase();
  if (TRUE.has(lower)) return ok(["loopback"]);
  if (FALSE.has(lower)) return ok(false);
  const entries = parseList(lower);
  if (entries.length === 0) return fail("a value is required");
  const problem = trustListProblem(entries);
  return problem ? fail(`${problem} (expected ${TRUST_EXPECTED})`) : ok(entries);
}

/** Why a list of trusted proxies (names, addresses, CIDRs; any case) is unusable, or undefined. */
export function trustListProblem(entries: readonly string[]): string | undefined {
  for (const entry of entries) {
    const problem = trustEntryProblem(entry.trim().toLowerCase());
    if (problem) return problem;
  }
  return undefined;
}

function httpUrl(text: string): URL | undefined {
  try {
    const url = new URL(text);
    return url.protocol === "http:" || url.protocol === "https:" ? url : undefined;
  } catch {
    return undefined;
  }
}

/** An absolute http(s) URL without a trailing slash. */
export function parseBaseUrl(text: string): Parsed<string> {
  const url = httpUrl(text);
  if (!url || /[?#]/.test(url.href)) return fail(`'${text}' is not an absolute http(s) URL without query or fragment`);
  return ok(url.href.replace(/\/+$/, ""));
}

/** CORS origins: `*` or `scheme://host[:port]` each. */
export function parseOrigins(text: string): Parsed<string[]> {
  const origins = parseList(text);
  for (const origin of origins) {
    if (origin === "*") continue;
    const url = httpUrl(origin);
    if (!url || url.origin !== origin.replace(/\/$/, "")) {
      return fail(`'${origin}' is not an origin (scheme://host[:port]) or *`);
    }
  }
  return ok(origins.map((origin) => origin.replace(/\/$/, "")));
}

const LEVELS = {
  silent: LogLevels.silent,
  error: LogLevels.error,
  warn: LogLevels.warn,
  info: LogLevels.info,
  debug: LogLevels.debug,
  trace: LogLevels.trace,
} as const;

/** consola's numeric level for a level name. */
export function parseLogLevel(text: string): Parsed<number> {
  const name = text.toLowerCase();
  if (!Object.hasOwn(LEVELS, name)) return fail(`'${text}' is not a log level (${Object.keys(LEVELS).join(", ")})`);
  return ok(LEVELS[name as keyof typeof LEVELS]);
}

/** The name of a consola level (`info` for 3), or the number when it has none of the names above. */
export function logLevelName(level: number): string {
  return Object.entries(LEVELS).find(([, value]) => value === level)?.[0] ?? String(level);
}

/** A `redis://` or `rediss://` URL with a host (credentials allowed: the setting is secret). */
export function parseRedisUrl(text: string): Parsed<string> {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return fail("expected a redis:// or rediss:// URL");
  }
  if (url.protocol !== "redis:" && url.protocol !== "rediss:") return fail("expected a redis:// or rediss:// URL");
  if (url.hostname === "") return fail("the URL names no host");
  return ok(text.trim());
}
