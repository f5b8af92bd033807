import type { EthicsClaims, RouteRecord } from "@vellum/core";

/** Variables that send traces, metrics, logs or errors to an outside service when set. */
const TELEMETRY_VARIABLES = [
  "OTEL_EXPORTER_OTLP_ENDPOINT",
  "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
  "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
  "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
  "OTEL_EXPORTER_ZIPKIN_ENDPOINT",
  "SENTRY_DSN",
  "DD_AGENT_HOST",
  "DD_TRACE_AGENT_URL",
  "NEW_RELIC_LICENSE_KEY",
  "ELASTIC_APM_SERVER_URL",
  "HONEYCOMB_API_KEY",
];
/** OpenTelemetry exporter switches; any value but `none` exports. */
const EXPORTER_SWITCHES = ["OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER", "OTEL_LOGS_EXPORTER"];
const METRICS_SIGNALS = new Set([
  "OTEL_EXPORTER_OTLP_ENDPOINT",
  "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
  "OTEL_METRICS_EXPORTER",
]);
/** Agents preloaded with `--require` / `--import` that report to a vendor. */
const AGENT_PRELOAD =
  /(?:--require|--import|-r)[ =]\S*(?:@opentelemetry|dd-trace|newrelic|elastic-apm-node|@sentry\/|@datadog)/;

export interface EthicsInput {
  routes: readonly RouteRecord[];
  environment: Readonly<Record<string, string | undefined>>;
  execArgv: readonly string[];
  /** The plugin that serves `/metrics` with the loopback-or-key rule (this one). */
  metricsOwner: string;
  /** What each registered component claims, by component name. */
  claims: ReadonlyMap<string, EthicsClaims>;
}

/** Names of the telemetry settings in force (never their values). */
export function telemetrySignals(env: EthicsInput["environment"], execArgv: readonly string[]): string[] {
  const set = (name: string) => (env[name] ?? "").trim() !== "";
  const signals = TELEMETRY_VARIABLES.filter(set);
  for (const name of EXPORTER_SWITCHES) if (set(name) && env[name]?.trim() !== "none") signals.push(name);
  if (AGENT_PRELOAD.test(env.NODE_OPTIONS ?? "")) signals.push("NODE_OPTIONS");
  if (AGENT_PRELOAD.test(execArgv.join(" "))) signals.push("execArgv");
  return signals;
}

/** Routes that declare `meta.logsQueries`, and components that claim `search_queries_logged`. */
export function queryLogging(input: Pick<EthicsInput, "routes" | "claims">): string[] {
  const found = input.routes.filter((r) => r.meta.logsQueries === true).map((r) => `${r.method} ${r.path}`);
  for (const [name, claims] of input.claims) if (claims.search_queries_logged === true) found.push(`component ${name}`);
  return found;
}

/**
 * Sums up the components' `backups_encrypted` claims: `none` when no component makes one (no
 * component keeps copies of the data, so there is nothing to vouch for), `encrypted` when every
 * claim is true, else `unencrypted`.
 */
export function encryptionClaim(claims: EthicsInput["claims"]): "none" | "encrypted" | "unencrypted" {
  const said = [...claims.values()].flatMap((c) =>
    typeof c.backups_encrypted === "boolean" ? [c.backups_encrypted] : [],
  );
  if (said.length === 0) return "none";
  return said.every(Boolean) ? "encrypted" : "unencrypted";
}

/**
 * The seed's ethics commitments, each computed from the running instance: queries are not
 * logged, no external telemetry is configured, copies of the data are encrypted (`null` while no
 * component claims to make any), and metrics stay local (only this plugin serves them, to
 * loopback clients or holders of the key).
 */
export function ethics(input: EthicsInput) {
  const queryLoggers = queryLogging(input);
  const signals = telemetrySignals(input.environment, input.execArgv);
  const encryption = encryptionClaim(input.claims);
  const metricsRoutes = input.routes.filter((r) => /(^|\/)metrics$/.test(r.path));
  const foreignMetrics = metricsRoutes.filter((r) => r.plugin !== input.metricsOwner);
  const checks = {
    search_queries_logged: queryLoggers.length > 0,
    external_telemetry: signals.length > 0,
    backups_encrypted: encryption === "none" ? null : encryption === "encrypted",
    metrics_local_only: foreignMetrics.length === 0 && !signals.some((s) => METRICS_SIGNALS.has(s)),
  };
  const compliant =
    !checks.search_queries_logged &&
    !checks.external_telemetry &&
    checks.backups_encrypted !== false &&
    checks.metrics_local_only;
  return {
    compliant,
    checks,
    details: {
      query_logging: queryLoggers,
      telemetry_signals: signals,
      backups: encryption,
      metrics_routes: metricsRoutes.map((r) => ({ path: r.path, plugin: r.plugin })),
    },
  };
}
