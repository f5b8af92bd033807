import type { RouteRecord, VellumConfig } from "@vellum/core";

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
  config: Readonly<VellumConfig>;
  routes: readonly RouteRecord[];
  environment: Readonly<Record<string, string | undefined>>;
  execArgv: readonly string[];
  /** The plugin that serves `/metrics` with the loopback-or-key rule (this one). */
  metricsOwner: string;
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

/** Options of one plugin as it runs: its factory's inline options over `pluginOptions[configKey]`. */
function pluginSettings(config: Readonly<VellumConfig>, name: string): Record<string, unknown> {
  const plugin = config.plugins?.find((p) => p && p.name === name);
  const key = plugin ? (plugin.definition.configKey ?? name) : name;
  return { ...config.pluginOptions?.[key], ...(plugin ? plugin.options : {}) };
}

/** `off`, `not configured`, `encrypted` or `unencrypted`, from the backup settings in force. */
export function backupMode(config: Readonly<VellumConfig>): "off" | "not configured" | "encrypted" | "unencrypted" {
  const backup = pluginSettings(config, "backup");
  if (backup.off === true) return "off";
  if (typeof backup.target !== "string" || backup.target === "") return "not configured";
  const keyed = typeof backup.passphrase === "string" && backup.passphrase !== "";
  return keyed && backup.encrypt !== false ? "encrypted" : "unencrypted";
}

/** Routes or plugin options that declare logging of queries (`meta.logsQueries`, `logQueries: true`). */
export function queryLogging(input: Pick<EthicsInput, "config" | "routes">): string[] {
  const found = input.routes.filter((r) => r.meta.logsQueries === true).map((r) => `${r.method} ${r.path}`);
  const names = new Set([
    ...Object.keys(input.config.pluginOptions ?? {}),
    ...(input.config.plugins ?? []).flatMap((p) => (p ? [p.name] : [])),
  ]);
  for (const name of names) if (pluginSettings(input.config, name).logQueries === true) found.push(`plugin ${name}`);
  return found;
}

/**
 * The seed's ethics commitments, each computed from the running configuration: search queries
 * are not logged, no external telemetry is configured, backups are encrypted (or off), and
 * metrics stay local (only this plugin serves them, to loopback clients or holders of the key).
 */
export function ethics(input: EthicsInput) {
  const queryLoggers = queryLogging(input);
  const signals = telemetrySignals(input.environment, input.execArgv);
  const backup = backupMode(input.config);
  const metricsRoutes = input.routes.filter((r) => /(^|\/)metrics$/.test(r.path));
  const foreignMetrics = metricsRoutes.filter((r) => r.plugin !== input.metricsOwner);
  const checks = {
    search_queries_logged: queryLoggers.length > 0,
    external_telemetry: signals.length > 0,
    backups_encrypted: backup !== "unencrypted",
    metrics_local_only: foreignMetrics.length === 0 && !signals.some((s) => METRICS_SIGNALS.has(s)),
  };
  const compliant =
    !checks.search_queries_logged &&
    !checks.external_telemetry &&
    checks.backups_encrypted &&
    checks.metrics_local_only;
  return {
    compliant,
    checks,
    details: {
      query_logging: queryLoggers,
      telemetry_signals: signals,
      backup,
      metrics_routes: metricsRoutes.map((r) => ({ path: r.path, plugin: r.plugin })),
    },
  };
}
