import type { ConsolaInstance } from "consola";
import type { Driver } from "unstorage";
import type { DatabaseConfig } from "./db/types.js";
import type { AnyVellumPlugin } from "./plugin/define.js";
import type { LockoutOptions } from "./security/lockout.js";
import type { RateLimitStore } from "./security/rate-limit.js";
import type { TrustProxySetting } from "./security/trust-proxy.js";

export interface SecurityConfig {
  /** Bearer key for writes. Without one every write answers 401 and `/health/security` says so. */
  apiKey?: string;
  /** HMAC secret for the signed double-submit CSRF cookie. Default: generated once into `<dataDir>/settings/csrf-secret` (0600). */
  csrfSecret?: string;
  /**
   * Which socket peers are trusted proxies, whose `X-Forwarded-For` names the client (see `TrustProxySetting`).
   * `false` (default): the socket address is the client IP. A hop count `n`: the `n`-th address from
   * the right, counting the peer (only safe when the port is reachable through the proxies alone).
   * Names and CIDRs (`loopback`, `linklocal`, `uniquelocal`, `10.0.0.0/8`, `2001:db8::/32`, a single
   * address; a comma list or an array): trust those peers only. `true` means `loopback`.
   */
  trustProxy?: TrustProxySetting;
  lockout?: Partial<LockoutOptions>;
  /** Where rate-limit and lockout counters live: in this process by default; `RedisRateLimitStore` (`@vellum/redis`) shares them between processes. */
  rateLimitStore?: RateLimitStore;
}

export interface VellumConfig {
  /** Data directory: `db/`, `settings/` and the folders plugins ask for live under it. */
  dataDir: string;
  /** Default: SQLite file `<dataDir>/db/vellum.sqlite`. */
  database?: DatabaseConfig;
  /** Drivers for plugins' storage namespaces, keyed by plugin name; default: files under `<dataDir>/storage/<plugin>/`. */
  storage?: Record<string, Driver>;
  plugins?: Array<AnyVellumPlugin | false | null | undefined>;
  /** Options per plugin, keyed by the plugin's `configKey` (its name by default). */
  pluginOptions?: Record<string, Record<string, unknown>>;
  security?: SecurityConfig;
  /** Origins allowed by CORS; empty means no CORS headers. `*` allows any origin (without credentials). */
  corsOrigins?: string[];
  /** Experimental flags (`SERVICE_FEATURES`), e.g. `ai`. */
  features?: string[];
  /** Absolute base URL of the service, for absolute links; `https:` makes the CSRF cookie `Secure`. */
  baseUrl?: string;
  /** Reported as `version` in `/health`. Default: `@vellum/core`'s own version. */
  version?: string;
  logger?: ConsolaInstance;
  /** consola level when no logger is given (-Infinity silent, 0 errors, 1 warnings, 3 info, 4 debug, 5 trace). Default 3. */
  logLevel?: number;
  /** Write one access log line per request. Default true. */
  accessLog?: boolean;
  /** Run pending migrations at start (default). `false`: refuse to start while any are pending. */
  migrate?: boolean;
  /**
   * Milliseconds a process's lease on a queue or a scheduled task lasts without renewal, when
   * several processes share the database: a process that died on another host is replaced after
   * it (one that died on this host, or shut down, at once). Default 30 000; at least 1 000.
   */
  leaseMs?: number;
  /** Milliseconds a plugin's setup may take. Default 10 000. */
  setupTimeoutMs?: number;
  /** Milliseconds `close()` waits for in-flight requests. Default 10 000. */
  shutdownTimeoutMs?: number;
  /** Show error messages of unexpected errors to clients. Never in production. */
  debug?: boolean;
}

/** Identity helper that types a config object (for `vellum.config.ts`). */
export function defineConfig<T extends Partial<VellumConfig>>(config: T): T {
  return config;
}
