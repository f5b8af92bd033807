import { type Parsed, parseList } from "@vellum/core";
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

const TRUE = new Set(["true", "1", "yes", "on"]);
const FALSE = new Set(["false", "0", "no", "off"]);

/** `true`, `false`, or the number of proxy hops to trust (`0` means none). */
export function parseTrustProxy(text: string): Parsed<boolean | number> {
  if (INTEGER.test(text)) {
    const hops = Number(text);
    if (hops > MAX_PROXY_HOPS) return fail(`${text} is out of range (at most ${MAX_PROXY_HOPS} proxy hops)`);
    return ok(hops === 0 ? false : hops);
  }
  const lower = text.toLowerCase();
  if (TRUE.has(lower)) return ok(true);
  if (FALSE.has(lower)) return ok(false);
  return fail(`'${text}' is not true, false or a number of proxy hops`);
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
