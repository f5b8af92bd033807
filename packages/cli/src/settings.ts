import type { AnyVellumPlugin, VellumConfig } from "@vellum/core";
import { readStoredApiKey, storedApiKeyProblem } from "./api-key.js";
import { loadConfigFile } from "./config-file.js";
import { useJsonLogs } from "./json-log.js";
import type { CliContext } from "./cli-context.js";
import { type AddressFlags, type EnvironmentResult, type ResolvedConfig, readEnvironment } from "./env.js";
import { CliError } from "./errors.js";
import { getPath } from "./key-path.js";
import { type InstalledPlugin, readPluginSettings } from "./plugin-settings.js";
import { cliGroup, declaredVariables, pluginGroup, type ResolvedGroup } from "./setting-groups.js";
import { settingPrefixes, unclaimedOptionsWarning, unclaimedVariables, unclaimedWarning } from "./unclaimed.js";

export interface Settings {
  config: ResolvedConfig;
  /** Default plugins followed by the config file's own. */
  plugins: AnyVellumPlugin[];
  /** Every setting of the command line and kernel, then of each installed plugin: effective value and source. */
  groups: ResolvedGroup[];
}

function isPlugin(entry: AnyVellumPlugin | false | null | undefined): entry is AnyVellumPlugin {
  return Boolean(entry);
}

/** The command line's own settings as resolved; without a configured key, the stored one stands in for it. */
function cliSettings(own: EnvironmentResult, storedApiKey: string | undefined): ResolvedGroup {
  const group = cliGroup();
  return {
    name: group.name,
    settings: group.settings.map((entry) => ({
      ...entry,
      value: getPath(own.config, entry.key) ?? (entry.key === "security.apiKey" ? storedApiKey : undefined),
      source: own.sources[entry.key] ?? "default",
    })),
  };
}

/**
 * Loads the config file and the environment, applies the flags, reads every installed plugin's settings and
 * performs every configuration check. Warns (stderr) about setting-like variables nothing installed reads;
 * throws a `CliError` (exit 2) listing all problems at once.
 */
export async function loadSettings(ctx: CliContext, flags: AddressFlags): Promise<Settings> {
  const file = await loadConfigFile(ctx.cwd);
  const own = readEnvironment(ctx.env, flags, { cwd: ctx.cwd, file: file.config });
  const installed: InstalledPlugin[] = [
    ...ctx.defaultPlugins().map((plugin) => ({ plugin, origin: "default" as const })),
    ...(file.config.plugins ?? []).filter(isPlugin).map((plugin) => ({ plugin, origin: "file" as const })),
  ];
  const plugins = readPluginSettings(installed, ctx.env, {
    pluginOptions: file.config.pluginOptions,
    dataDir: own.config.dataDir,
  });
  const declared = declaredVariables([cliGroup(), ...installed.map(({ plugin }) => pluginGroup(plugin))]);
  for (const name of unclaimedVariables(ctx.env, settingPrefixes(ctx.settingPrefixes), declared)) {
    ctx.printError(unclaimedWarning(name));
  }
  const keys = new Set(installed.map(({ plugin }) => plugin.definition.configKey ?? plugin.name));
  for (const key of Object.keys(file.config.pluginOptions ?? {}).filter((k) => !keys.has(k))) {
    ctx.printError(unclaimedOptionsWarning(key));
  }
  const problems = [...file.problems, ...own.errors, ...plugins.problems];
  const configured = own.config.security?.apiKey;
  const stored = configured === undefined ? await readStoredApiKey(own.config.dataDir) : undefined;
  const storedProblem = storedApiKeyProblem(own.config.dataDir, stored);
  if (storedProblem) problems.push(storedProblem);
  if (problems.length > 0) throw CliError.configuration(problems);
  return {
    config: { ...own.config, pluginOptions: plugins.pluginOptions },
    plugins: installed.map(({ plugin }) => plugin),
    groups: [cliSettings(own, stored), ...plugins.groups],
  };
}

/** The kernel configuration: settings without the listen address, plus plugins, version and the API key. */
export function toVellumConfig(
  settings: Settings,
  ctx: CliContext,
  secrets: { apiKey?: string; csrfSecret?: string } = {},
): VellumConfig {
  const {
    port: _port,
    host: _host,
    logFormat,
    redisUrl: _redisUrl,
    ...config
  } = settings.config as ResolvedConfig & { logFormat?: string };
  // A config file's `logFormat: "json"` (the environment's is applied when the CLI starts).
  if (logFormat === "json") useJsonLogs(ctx.logger);
  // The kernel logs through the CLI's logger, so its lines follow the CLI's format, colour and streams.
  const logger = ctx.logger.withTag("vellum");
  logger.level = config.logLevel ?? ctx.logger.level;
  return {
    ...config,
    logger,
    plugins: settings.plugins,
    version: config.version ?? ctx.version,
    security: {
      ...config.security,
      apiKey: secrets.apiKey ?? config.security?.apiKey,
      ...(secrets.csrfSecret ? { csrfSecret: secrets.csrfSecret } : {}),
    },
  };
}
