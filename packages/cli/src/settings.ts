import type { AnyVellumPlugin, VellumConfig } from "@vellum/core";
import { readStoredApiKey, storedApiKeyProblem } from "./api-key.js";
import { loadConfigFile } from "./config-file.js";
import type { CliContext } from "./context.js";
import { type AddressFlags, type ResolvedConfig, readEnvironment } from "./env.js";
import { CliError } from "./errors.js";

export interface Settings {
  config: ResolvedConfig;
  /** Default plugins followed by the config file's own. */
  plugins: AnyVellumPlugin[];
}

function isPlugin(entry: AnyVellumPlugin | false | null | undefined): entry is AnyVellumPlugin {
  return Boolean(entry);
}

/**
 * Loads the config file and the environment, applies the flags and performs every configuration check;
 * throws a `CliError` (exit 2) listing all problems at once.
 */
export async function loadSettings(ctx: CliContext, flags: AddressFlags): Promise<Settings> {
  const file = await loadConfigFile(ctx.cwd);
  const { config, errors } = readEnvironment(ctx.env, flags, { cwd: ctx.cwd, file: file.config });
  const problems = [...file.problems, ...errors];
  if (config.security?.apiKey === undefined) {
    const stored = storedApiKeyProblem(config.dataDir, await readStoredApiKey(config.dataDir));
    if (stored) problems.push(stored);
  }
  if (problems.length > 0) throw CliError.configuration(problems);
  const extra = (file.config.plugins ?? []).filter(isPlugin);
  return { config, plugins: [...ctx.defaultPlugins(), ...extra] };
}

/** The kernel configuration: settings without the listen address, plus plugins, version and the API key. */
export function toVellumConfig(
  settings: Settings,
  ctx: CliContext,
  secrets: { apiKey?: string; csrfSecret?: string } = {},
): VellumConfig {
  const { port: _port, host: _host, ...config } = settings.config;
  return {
    ...config,
    plugins: settings.plugins,
    version: config.version ?? ctx.version,
    security: {
      ...config.security,
      apiKey: secrets.apiKey ?? config.security?.apiKey,
      ...(secrets.csrfSecret ? { csrfSecret: secrets.csrfSecret } : {}),
    },
  };
}
