import { resolve } from "node:path";
import { checkSettings, type Parsed, readSettingsFromEnv, settingDefaults, type VellumConfig } from "@vellum/core";
import type { FileConfig } from "./config-file.js";
import type { ConfigProblem } from "./errors.js";
import { getPath, nest } from "./key-path.js";
import { mergeLayers } from "./merge.js";
import { CLI_SETTINGS, type CliSettingDeclaration } from "./own-settings.js";
import { parseBaseUrl } from "./parse.js";
import type { SettingSource } from "./setting-groups.js";

/** The address flags, by their key in `CLI_SETTINGS`. */
export interface AddressFlags {
  port?: string | number | undefined;
  host?: string | undefined;
  dataDir?: string | undefined;
}

export interface ReadEnvironmentOptions {
  /** Directory relative paths are resolved against. Default: `process.cwd()`. */
  cwd?: string;
  /** Settings from `vellum.config.*`; the environment wins over them, flags win over both. */
  file?: FileConfig;
}

export type ResolvedConfig = Partial<VellumConfig> & {
  port: number;
  host: string;
  dataDir: string;
  baseUrl: string;
  /** `SERVICE_REDIS_URL`: where `vellum serve` keeps rate-limit and lockout counters (`counterStore`). */
  redisUrl?: string;
};

export interface EnvironmentResult {
  config: ResolvedConfig;
  errors: ConfigProblem[];
  /** Where each setting of `CLI_SETTINGS` came from, by its key. */
  sources: Record<string, SettingSource>;
}

type Values = Record<string, unknown>;

const DECLARED = Object.entries(CLI_SETTINGS) as Array<[string, CliSettingDeclaration]>;

function readFlags(flags: AddressFlags): { values: Values; problems: ConfigProblem[] } {
  const values: Values = {};
  const problems: ConfigProblem[] = [];
  for (const [key, declaration] of DECLARED) {
    const raw = (flags as Values)[key];
    if (declaration.flag === undefined || raw === undefined) continue;
    const parsed = declaration.parse(String(raw).trim());
    if (parsed.ok) values[key] = parsed.value;
    else problems.push({ variable: declaration.flag, message: parsed.problem });
  }
  return { values, problems };
}

function defaultBaseUrl(host: string, port: number): Parsed<string> {
  const parsed = parseBaseUrl(`http://${host.includes(":") ? `[${host}]` : host}:${port}`);
  return parsed.ok ? parsed : { ok: false, problem: `'${host}' is not a host name or IP address` };
}

function resolveDatabase(database: VellumConfig["database"], cwd: string): VellumConfig["database"] {
  const sqlite = database?.sqlite;
  if (!sqlite || sqlite.path === ":memory:") return database;
  return { ...database, sqlite: { ...sqlite, path: resolve(cwd, sqlite.path) } };
}

/**
 * Reads the settings of the command line and the kernel (`CLI_SETTINGS`) from the environment, layered as
 * flags > environment > config file > defaults, and checks the values in effect. Everything else in the file passes through
 * (plugins' settings are read by `readPluginSettings`). Relative paths resolve against `cwd`; problems name
 * the variable, flag or file key, never a secret.
 */
export function readEnvironment(
  env: NodeJS.ProcessEnv,
  flags: AddressFlags = {},
  options: ReadEnvironmentOptions = {},
): EnvironmentResult {
  const cwd = options.cwd ?? process.cwd();
  const { plugins: _plugins, ...file } = options.file ?? {};
  const fromEnv = readSettingsFromEnv(CLI_SETTINGS, env);
  const fromFlags = readFlags(flags);
  const fromFile = Object.fromEntries(DECLARED.map(([key]) => [key, getPath(file, key)]));
  const sourceOf = (key: string): SettingSource => {
    if (fromFlags.values[key] !== undefined) return "flag";
    if ((fromEnv.options as Values)[key] !== undefined) return "env";
    return fromFile[key] !== undefined ? "file" : "default";
  };
  const fileInEffect = Object.fromEntries(Object.entries(fromFile).filter(([key]) => sourceOf(key) === "file"));
  const problems: ConfigProblem[] = [
    ...fromEnv.problems.map(({ variable, message }) => ({ variable, message })),
    ...fromFlags.problems,
    ...checkSettings(CLI_SETTINGS, fileInEffect).map(({ setting, message }) => ({ variable: setting, message })),
  ];
  const merged = mergeLayers<FileConfig>(
    nest(settingDefaults(CLI_SETTINGS)),
    file,
    nest(fromEnv.options),
    nest(fromFlags.values),
  ) as FileConfig & { port: number; host: string; dataDir: string };
  let baseUrl = merged.baseUrl;
  // Port 0 asks the system for a free port, known only once listening: no absolute URL can be
  // derived from it, so links stay relative (`/media/<file>`) rather than point at port 0.
  if (baseUrl === undefined && merged.port !== 0) {
    const derived = defaultBaseUrl(merged.host, merged.port);
    if (derived.ok) baseUrl = derived.value;
    else problems.push({ variable: flags.host !== undefined ? "--host" : "HOST", message: derived.problem });
  }
  return {
    config: {
      ...merged,
      dataDir: resolve(cwd, merged.dataDir),
      database: resolveDatabase(merged.database, cwd),
      baseUrl: baseUrl ?? "",
    },
    errors: problems,
    sources: Object.fromEntries(DECLARED.map(([key]) => [key, sourceOf(key)])),
  };
}
