import { LogLevels } from "consola";

/** Result of parsing one raw setting: a value, or a one-line problem that never repeats a secret. */
export type Parsed<T> = { ok: true; value: T } | { ok: false; problem: string };

const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
const fail = (problem: string): Parsed<never> => ({ ok: false, problem });

const DECIMAL = /^\d+(\.\d+)?$/;
const INTEGER = /^\d+$/;

export function parsePort(text: string): Parsed<number> {
  const port = Number(text);
  if (!INTEGER.test(text) || port > 65_535) return fail(`'${text}' is not a port number (0-65535)`);
  return ok(port);
}

/** A positive decimal amount (`10`, `0.5`) no larger than `max`. */
export function parseAmount(text: string, unit: string, max: number): Parsed<number> {
  const value = Number(text);
  if (!DECIMAL.test(text)) return fail(`'${text}' is not a positive number of ${unit}`);
  if (value <= 0 || value > max) return fail(`${text} is out of range (more than 0, at most ${max} ${unit})`);
  return ok(value);
}

const TRUE = new Set(["true", "1", "yes", "on"]);
const FALSE = new Set(["false", "0", "no", "off"]);

export function parseBoolean(text: string): Parsed<boolean> {
  const lower = text.toLowerCase();
  if (TRUE.has(lower)) return ok(true);
  if (FALSE.has(lower)) return ok(false);
  return fail(`'${text}' is not a boolean (true or false)`);
}

/** `true`, `false`, or the number of proxy hops to trust (`0` means none). */
export function parseTrustProxy(text: string): Parsed<boolean | number> {
  if (INTEGER.test(text)) {
    const hops = Number(text);
    if (hops > 32) return fail(`${text} is out of range (at most 32 proxy hops)`);
    return ok(hops === 0 ? false : hops);
  }
  const flag = parseBoolean(text);
  return flag.ok ? flag : fail(`'${text}' is not true, false or a number of proxy hops`);
}

/** Comma list: entries trimmed, empty ones dropped. */
export function parseList(text: string): string[] {
  return text
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
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
  if (!url || url.search || url.hash) return fail(`'${text}' is not an absolute http(s) URL without query or fragment`);
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

/** Webhook receivers: absolute http(s) URLs. A bad one is named by position, since such URLs often embed tokens. */
export function parseWebhookUrls(text: string): Parsed<string[]> {
  const urls = parseList(text);
  const bad = urls.findIndex((entry) => httpUrl(entry) === undefined);
  if (bad >= 0) return fail(`entry ${bad + 1} is not an absolute http(s) URL`);
  return ok(urls);
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
