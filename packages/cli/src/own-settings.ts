import { MIN_API_KEY_LENGTH, type Parsed, parseList, type SettingDeclaration } from "@vellum/core";
import { LogLevels } from "consola";
import { parseDatabaseUrl } from "./database-url.js";
import {
  logLevelName,
  parseBaseUrl,
  parseLogLevel,
  parseOrigins,
  parsePort,
  parseRedisUrl,
  parseRequired,
  parseTrustProxy,
  trustListProblem,
} from "./parse.js";

/**
 * A setting of the command line or the kernel, declared the way plugins declare theirs, plus the flag that
 * wins over its variable (plugins' settings have none).
 */
export interface CliSettingDeclaration extends SettingDeclaration {
  /** The flag that wins over the variable (`--port`). */
  flag?: string;
}

const problemOf = (parsed: Parsed<unknown>) => (parsed.ok ? undefined : parsed.problem);

/** Checks a value from the config file with the parser of the variable. */
const textCheck = (parse: (text: string) => Parsed<unknown>) => (value: unknown) =>
  typeof value === "string" ? problemOf(parse(value)) : "expected a string";

const isStringList = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((entry) => typeof entry === "string");

/** A `security.trustProxy` from the config file, as the kernel takes it (a string there is a list, not a word). */
function checkTrustProxy(value: unknown): string | undefined {
  if (typeof value === "boolean") return undefined;
  if (typeof value === "number") {
    return Number.isInteger(value) && value >= 0
      ? problemOf(parseTrustProxy(String(value)))
      : "expected a number of proxy hops (0 or more)";
  }
  if (typeof value === "string") return trustListProblem(parseList(value));
  if (isStringList(value)) return trustListProblem(value);
  return "expected false, true, a number of proxy hops, or a list of loopback, linklocal, uniquelocal, addresses and CIDRs";
}

function parseApiKey(text: string): Parsed<string> {
  return text.length < MIN_API_KEY_LENGTH
    ? { ok: false, problem: `the key is shorter than ${MIN_API_KEY_LENGTH} characters` }
    : { ok: true, value: text };
}

/**
 * The settings of the command line and the kernel, keyed by their (dotted) key in the config file. The CLI
 * reads, checks, prints (`vellum config`) and documents (`docs/config.md`) them like the plugins' settings.
 */
export const CLI_SETTINGS = {
  port: {
    env: "PORT",
    flag: "--port",
    description: "listen port of `vellum serve` (`--port` wins)",
    default: 3000,
    parse: parsePort,
    check: (value: unknown) =>
      Number.isInteger(value) && (value as number) >= 0 && (value as number) <= 65_535
        ? undefined
        : "expected a port number (0-65535)",
  },
  host: {
    env: "HOST",
    flag: "--host",
    description: "listen address (`--host` wins)",
    default: "127.0.0.1",
    parse: parseRequired,
    check: textCheck(parseRequired),
  },
  dataDir: {
    env: "SERVICE_DATA_DIR",
    flag: "--data-dir",
    description: "data directory (`--data-dir` wins): `db/`, `settings/` and the folders plugins ask for",
    default: "./data",
    parse: parseRequired,
    check: textCheck(parseRequired),
  },
  "security.apiKey": {
    env: "SERVICE_API_KEY",
    description:
      `bearer key for writes (at least ${MIN_API_KEY_LENGTH} characters). Unset: generated into ` +
      "`<data>/settings/api-key` (0600) and printed once; the environment wins over the stored key",
    defaultText: "generated",
    secret: true,
    parse: parseApiKey,
    check: textCheck(parseApiKey),
  },
  baseUrl: {
    env: "SERVICE_BASE_URL",
    description:
      "absolute URL of the service, for absolute links (default: the effective listen address; none with port 0, and links are relative); " +
      "its path is the prefix links carry behind a proxy that strips one; `https:` makes the CSRF cookie `Secure`",
    defaultText: "http://<host>:<port>",
    parse: parseBaseUrl,
    check: textCheck(parseBaseUrl),
  },
  "database.sqlite.path": {
    env: "SERVICE_DATABASE_URL",
    description: "a SQLite path or `sqlite:` / `file:` URL; `postgres://` is refused until scale-out lands",
    defaultText: "<data>/db/vellum.sqlite",
    parse: parseDatabaseUrl,
    check: textCheck(parseRequired),
  },
  redisUrl: {
    env: "SERVICE_REDIS_URL",
    description:
      "Redis (`redis://` or `rediss://`) that keeps rate-limit and lockout counters for every process of a deployment; " +
      "unset: each process counts on its own",
    defaultText: "none",
    secret: true,
    parse: parseRedisUrl,
    check: textCheck(parseRedisUrl),
  },
  "security.trustProxy": {
    env: "SERVICE_TRUST_PROXY",
    description:
      "which peers are trusted proxies, whose `X-Forwarded-For` names the client: `false`, a comma list of " +
      "`loopback`, `linklocal`, `uniquelocal`, addresses and CIDRs (`10.0.0.0/8`), or a hop count " +
      "(trusts any peer: only when the port is reachable through the proxies alone); `true` means `loopback`",
    default: false,
    parse: parseTrustProxy,
    check: checkTrustProxy,
  },
  corsOrigins: {
    env: "SERVICE_CORS_ORIGINS",
    description: "comma list of `scheme://host[:port]` origins, or `*`",
    default: [],
    parse: parseOrigins,
    check: (value: unknown) =>
      isStringList(value) ? problemOf(parseOrigins(value.join(","))) : "expected a list of origins",
  },
  features: {
    env: "SERVICE_FEATURES",
    description: "comma list of experimental flags (`ai`)",
    default: [],
    parse: (text: string): Parsed<string[]> => ({ ok: true, value: parseList(text) }),
    check: (value: unknown) => (isStringList(value) ? undefined : "expected a list of flags"),
  },
  logFormat: {
    env: "SERVICE_LOG_FORMAT",
    description:
      "`text`, or `json`: one JSON object a line (time, level, message, and the access log's request id, route, status, duration)",
    default: "text",
    parse: (text: string): Parsed<string> =>
      text === "text" || text === "json"
        ? { ok: true, value: text }
        : { ok: false, problem: `'${text}' is not text or json` },
    check: (value: unknown) => (value === "text" || value === "json" ? undefined : "expected text or json"),
  },
  logLevel: {
    env: "SERVICE_LOG_LEVEL",
    description: "`silent`, `error`, `warn`, `info`, `debug`, `trace`",
    default: LogLevels.info,
    defaultText: "info",
    parse: parseLogLevel,
    check: (value: unknown) =>
      typeof value === "number" && !Number.isNaN(value) ? undefined : "expected a consola level number",
    show: (value: unknown) => logLevelName(value as number),
  },
} satisfies Record<string, CliSettingDeclaration>;
