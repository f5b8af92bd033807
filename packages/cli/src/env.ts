import { resolve } from "node:path";
import type { VellumConfig } from "@vellum/core";
import { LogLevels } from "consola";
import { crossChecks } from "./checks.js";
import type { FileConfig } from "./config-file.js";
import { parseDatabaseUrl } from "./database-url.js";
import type { ConfigProblem } from "./errors.js";
import { mergeLayers } from "./merge.js";
import {
  type Parsed,
  parseAmount,
  parseBaseUrl,
  parseBoolean,
  parseList,
  parseLogLevel,
  parseOrigins,
  parsePort,
  parseTrustProxy,
  parseWebhookUrls,
} from "./parse.js";

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

export type ResolvedConfig = Partial<VellumConfig> & { port: number; host: string; dataDir: string; baseUrl: string };

export interface EnvironmentResult {
  config: ResolvedConfig;
  errors: ConfigProblem[];
}

type Layer = FileConfig;

const GIB = 1024 ** 3;
const MIB = 1024 ** 2;
const MAX_AMOUNT = 1_000_000;

function defaults(): Layer {
  return {
    port: 3000,
    host: "127.0.0.1",
    dataDir: "./data",
    storageQuotaBytes: 10 * GIB,
    logLevel: LogLevels.info,
    corsOrigins: [],
    features: [],
    security: { trustProxy: false },
    pluginOptions: { media: { maxUploadBytes: 25 * MIB, allowPdf: false }, webhooks: { urls: [] } },
  };
}

class Reader {
  readonly problems: ConfigProblem[] = [];

  constructor(
    private readonly env: NodeJS.ProcessEnv,
    readonly cwd: string,
  ) {}

  /** A plain value, trimmed; empty counts as unset. */
  text(name: string): string | undefined {
    const value = this.env[name]?.trim();
    return value ? value : undefined;
  }

  /** A secret, taken exactly as given; empty counts as unset. */
  secret(name: string): string | undefined {
    const value = this.env[name];
    return value ? value : undefined;
  }

  path(name: string): string | undefined {
    const value = this.text(name);
    return value === undefined ? undefined : resolve(this.cwd, value);
  }

  parse<T>(name: string, parser: (text: string) => Parsed<T>, text = this.text(name)): T | undefined {
    if (text === undefined) return undefined;
    const parsed = parser(text);
    if (parsed.ok) return parsed.value;
    this.problems.push({ variable: name, message: parsed.problem });
    return undefined;
  }
}

const scaled = (value: number | undefined, unit: number) =>
  value === undefined ? undefined : Math.floor(value * unit);

function environmentLayer(read: Reader): Layer {
  const databasePath = read.parse("SERVICE_DATABASE_URL", (text) => parseDatabaseUrl(text, read.cwd));
  const features = read.text("SERVICE_FEATURES");
  return {
    port: read.parse("PORT", parsePort),
    host: read.text("HOST"),
    dataDir: read.text("SERVICE_DATA_DIR"),
    baseUrl: read.parse("SERVICE_BASE_URL", parseBaseUrl),
    database: databasePath === undefined ? undefined : { sqlite: { path: databasePath } },
    storageQuotaBytes: scaled(
      read.parse("STORAGE_QUOTA_GB", (text) => parseAmount(text, "GB", MAX_AMOUNT)),
      GIB,
    ),
    logLevel: read.parse("SERVICE_LOG_LEVEL", parseLogLevel),
    corsOrigins: read.parse("SERVICE_CORS_ORIGINS", parseOrigins),
    features: features === undefined ? undefined : parseList(features),
    security: {
      apiKey: read.secret("SERVICE_API_KEY"),
      trustProxy: read.parse("SERVICE_TRUST_PROXY", parseTrustProxy),
    },
    pluginOptions: {
      webhooks: {
        urls: read.parse("SERVICE_WEBHOOK_URLS", parseWebhookUrls),
        secret: read.secret("SERVICE_WEBHOOK_SECRET"),
      },
      media: {
        maxUploadBytes: scaled(
          read.parse("MEDIA_MAX_UPLOAD_MB", (text) => parseAmount(text, "MB", MAX_AMOUNT)),
          MIB,
        ),
        allowPdf: read.parse("MEDIA_ALLOW_PDF", parseBoolean),
      },
      backup: {
        target: read.path("BACKUP_TARGET"),
        passphrase: read.secret("SERVICE_BACKUP_PASSPHRASE"),
        previousPassphrase: read.secret("SERVICE_BACKUP_PASSPHRASE_PREVIOUS"),
        off: read.parse("BACKUP_OFF", parseBoolean),
        restoreFrom: read.path("SERVICE_RESTORE_FROM"),
      },
    },
  };
}

function required(value: string): Parsed<string> {
  return value.trim() === "" ? { ok: false, problem: "a value is required" } : { ok: true, value };
}

function flagLayer(read: Reader, flags: AddressFlags): Layer {
  return {
    port: flags.port === undefined ? undefined : read.parse("--port", parsePort, String(flags.port).trim()),
    host: read.parse("--host", required, flags.host),
    dataDir: read.parse("--data-dir", required, flags.dataDir),
  };
}

function withoutPlugins(file: FileConfig): FileConfig {
  const { plugins: _plugins, ...rest } = file;
  return rest;
}

function resolveBackupPaths(backup: Record<string, unknown>, cwd: string): Record<string, unknown> {
  const resolved = { ...backup };
  for (const key of ["target", "restoreFrom"]) {
    const value = resolved[key];
    if (typeof value === "string") resolved[key] = resolve(cwd, value);
  }
  return resolved;
}

function defaultBaseUrl(host: string, port: number): Parsed<string> {
  const parsed = parseBaseUrl(`http://${host.includes(":") ? `[${host}]` : host}:${port}`);
  return parsed.ok ? parsed : { ok: false, problem: `'${host}' is not a host name or IP address` };
}

/**
 * Reads every setting of contract §2 from the environment, layered as flags > environment > config file >
 * defaults, and checks them. Relative paths resolve against `cwd`; problems name the variable, never a secret.
 */
export function readEnvironment(
  env: NodeJS.ProcessEnv,
  flags: AddressFlags = {},
  options: ReadEnvironmentOptions = {},
): EnvironmentResult {
  const read = new Reader(env, options.cwd ?? process.cwd());
  const merged = mergeLayers<Layer>(
    defaults(),
    withoutPlugins(options.file ?? {}),
    environmentLayer(read),
    flagLayer(read, flags),
  ) as Layer & { port: number; host: string; dataDir: string };
  const dataDir = resolve(read.cwd, merged.dataDir);
  const hostSource = flags.host !== undefined ? "--host" : "HOST";
  const baseUrl = merged.baseUrl ?? read.parse(hostSource, () => defaultBaseUrl(merged.host, merged.port), merged.host);
  const pluginOptions = { ...merged.pluginOptions };
  if (pluginOptions.backup) pluginOptions.backup = resolveBackupPaths(pluginOptions.backup, read.cwd);
  const problems = crossChecks({
    dataDir,
    apiKey: merged.security?.apiKey,
    webhooks: pluginOptions.webhooks ?? {},
    backup: pluginOptions.backup ?? {},
  });
  return {
    config: { ...merged, dataDir, baseUrl: baseUrl ?? "", pluginOptions },
    errors: [...read.problems, ...problems],
  };
}
