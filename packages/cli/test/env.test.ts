import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LogLevels } from "consola";
import { describe, expect, it } from "vitest";
import { readEnvironment } from "../src/env.js";
import { formatProblem } from "../src/errors.js";

const cwd = mkdtempSync(join(tmpdir(), "vellum-env-"));
const API_KEY = "k".repeat(40);
const WEBHOOK_SECRET = "webhook-secret-value";
const PASSPHRASE = "a long backup passphrase";
const SECRETS = [API_KEY, WEBHOOK_SECRET, PASSPHRASE, "hunter2", "token-in-path"];

function read(env: NodeJS.ProcessEnv, flags = {}) {
  return readEnvironment(env, flags, { cwd });
}

describe("readEnvironment defaults", () => {
  it("applies contract §2 defaults", () => {
    const { config, errors } = read({});
    expect(errors).toEqual([]);
    expect(config.port).toBe(3000);
    expect(config.host).toBe("127.0.0.1");
    expect(config.dataDir).toBe(join(cwd, "data"));
    expect(config.baseUrl).toBe("http://127.0.0.1:3000");
    expect(config.storageQuotaBytes).toBe(10 * 1024 ** 3);
    expect(config.logLevel).toBe(LogLevels.info);
    expect(config.corsOrigins).toEqual([]);
    expect(config.features).toEqual([]);
    expect(config.security).toEqual({ trustProxy: false });
    expect(config.database).toBeUndefined();
    expect(config.pluginOptions).toEqual({
      media: { maxUploadBytes: 25 * 1024 ** 2, allowPdf: false },
      webhooks: { urls: [] },
    });
  });

  it("treats empty variables as unset", () => {
    const { config, errors } = read({ PORT: "", SERVICE_API_KEY: "", BACKUP_TARGET: "  " });
    expect(errors).toEqual([]);
    expect(config.port).toBe(3000);
    expect(config.security?.apiKey).toBeUndefined();
    expect(config.pluginOptions?.backup).toBeUndefined();
  });
});

describe("readEnvironment values", () => {
  it("maps every variable", () => {
    const { config, errors } = read({
      PORT: "8080",
      HOST: "0.0.0.0",
      SERVICE_DATA_DIR: "var/vellum",
      SERVICE_API_KEY: API_KEY,
      SERVICE_DATABASE_URL: "sqlite:///srv/vellum.sqlite",
      SERVICE_TRUST_PROXY: "2",
      SERVICE_CORS_ORIGINS: "https://a.example, https://b.example:8443/",
      SERVICE_FEATURES: "ai,,beta",
      SERVICE_LOG_LEVEL: "DEBUG",
      SERVICE_WEBHOOK_URLS: "https://hooks.example/in",
      SERVICE_WEBHOOK_SECRET: WEBHOOK_SECRET,
      STORAGE_QUOTA_GB: "0.5",
      MEDIA_MAX_UPLOAD_MB: "8",
      MEDIA_ALLOW_PDF: "true",
      BACKUP_TARGET: "/srv/backups",
      SERVICE_BACKUP_PASSPHRASE: PASSPHRASE,
      BACKUP_OFF: "false",
      SERVICE_RESTORE_FROM: "restore/vk-20250101-000000.vpbk",
    });
    expect(errors).toEqual([]);
    expect(config).toMatchObject({
      port: 8080,
      host: "0.0.0.0",
      dataDir: join(cwd, "var/vellum"),
      baseUrl: "http://0.0.0.0:8080",
      database: { sqlite: { path: "/srv/vellum.sqlite" } },
      security: { apiKey: API_KEY, trustProxy: 2 },
      corsOrigins: ["https://a.example", "https://b.example:8443"],
      features: ["ai", "beta"],
      logLevel: LogLevels.debug,
      storageQuotaBytes: 512 * 1024 ** 2,
      pluginOptions: {
        webhooks: { urls: ["https://hooks.example/in"], secret: WEBHOOK_SECRET },
        media: { maxUploadBytes: 8 * 1024 ** 2, allowPdf: true },
        backup: {
          target: "/srv/backups",
          passphrase: PASSPHRASE,
          off: false,
          restoreFrom: join(cwd, "restore/vk-20250101-000000.vpbk"),
        },
      },
    });
  });

  it("accepts trust-proxy booleans and silent logging", () => {
    expect(read({ SERVICE_TRUST_PROXY: "true" }).config.security?.trustProxy).toBe(true);
    expect(read({ SERVICE_TRUST_PROXY: "0" }).config.security?.trustProxy).toBe(false);
    expect(read({ SERVICE_LOG_LEVEL: "silent" }).config.logLevel).toBe(LogLevels.silent);
  });

  it("brackets an IPv6 host in the default base URL and keeps an explicit one", () => {
    expect(read({ HOST: "::1", PORT: "4000" }).config.baseUrl).toBe("http://[::1]:4000");
    expect(read({ SERVICE_BASE_URL: "https://cms.example/api/" }).config.baseUrl).toBe("https://cms.example/api");
  });

  it("derives the base URL from the effective address, flags winning over the environment", () => {
    const { config } = read({ PORT: "4000", HOST: "10.0.0.1" }, { port: "5000", host: "localhost", dataDir: "/d" });
    expect(config).toMatchObject({ port: 5000, host: "localhost", dataDir: "/d", baseUrl: "http://localhost:5000" });
  });

  it("reads plain and file: database paths", () => {
    expect(read({ SERVICE_DATABASE_URL: "db/main.sqlite" }).config.database).toEqual({
      sqlite: { path: join(cwd, "db/main.sqlite") },
    });
    expect(read({ SERVICE_DATABASE_URL: "file:///tmp/x.sqlite" }).config.database).toEqual({
      sqlite: { path: "/tmp/x.sqlite" },
    });
  });

  it("needs no passphrase when backup is off", () => {
    expect(read({ BACKUP_TARGET: "/srv/backups", BACKUP_OFF: "true" }).errors).toEqual([]);
  });
});

const BAD: Array<[string, NodeJS.ProcessEnv, Record<string, string>?]> = [
  ["PORT", { PORT: "abc" }],
  ["PORT", { PORT: "70000" }],
  ["--port", {}, { port: "http" }],
  ["--host", {}, { host: "" }],
  ["HOST", { HOST: "bad host" }],
  ["STORAGE_QUOTA_GB", { STORAGE_QUOTA_GB: "ten" }],
  ["STORAGE_QUOTA_GB", { STORAGE_QUOTA_GB: "0" }],
  ["MEDIA_MAX_UPLOAD_MB", { MEDIA_MAX_UPLOAD_MB: "-5" }],
  ["MEDIA_ALLOW_PDF", { MEDIA_ALLOW_PDF: "maybe" }],
  ["BACKUP_OFF", { BACKUP_OFF: "perhaps" }],
  ["SERVICE_TRUST_PROXY", { SERVICE_TRUST_PROXY: "sometimes" }],
  ["SERVICE_LOG_LEVEL", { SERVICE_LOG_LEVEL: "loud" }],
  ["SERVICE_BASE_URL", { SERVICE_BASE_URL: "not a url" }],
  ["SERVICE_BASE_URL", { SERVICE_BASE_URL: "ftp://files.example" }],
  ["SERVICE_CORS_ORIGINS", { SERVICE_CORS_ORIGINS: "https://a.example/path" }],
  [
    "SERVICE_WEBHOOK_URLS",
    { SERVICE_WEBHOOK_URLS: "https://hooks.example/token-in-path,nope", SERVICE_WEBHOOK_SECRET: WEBHOOK_SECRET },
  ],
  ["SERVICE_WEBHOOK_SECRET", { SERVICE_WEBHOOK_URLS: "https://hooks.example/token-in-path" }],
  ["SERVICE_API_KEY", { SERVICE_API_KEY: "short-key" }],
  ["SERVICE_DATABASE_URL", { SERVICE_DATABASE_URL: "postgres://vellum:hunter2@db.example/vellum" }],
  ["SERVICE_DATABASE_URL", { SERVICE_DATABASE_URL: "mysql://vellum:hunter2@db.example/vellum" }],
  ["BACKUP_TARGET", { BACKUP_TARGET: "data/backups", SERVICE_BACKUP_PASSPHRASE: PASSPHRASE }],
  ["BACKUP_TARGET", { SERVICE_DATA_DIR: "/srv/vellum", BACKUP_TARGET: "/srv/vellum", BACKUP_OFF: "true" }],
  ["SERVICE_BACKUP_PASSPHRASE", { BACKUP_TARGET: "/srv/backups" }],
  ["SERVICE_BACKUP_PASSPHRASE", { BACKUP_TARGET: "/srv/backups", SERVICE_BACKUP_PASSPHRASE: "hunter2" }],
];

describe("readEnvironment problems", () => {
  it.each(BAD)("%s: %j %j gives exactly one line naming it, without secrets", (variable, env, flags) => {
    const { errors } = read({ SERVICE_API_KEY: API_KEY, ...env }, flags);
    expect(errors).toHaveLength(1);
    const line = formatProblem(errors[0]!);
    expect(line.startsWith(`vellum: ${variable}: `)).toBe(true);
    expect(line).not.toContain("\n");
    for (const secret of SECRETS) expect(line).not.toContain(secret);
  });

  it("says that PostgreSQL arrives with scale-out", () => {
    const { errors } = read({ SERVICE_DATABASE_URL: "postgresql://u:hunter2@h/db" });
    expect(errors[0]?.message).toMatch(/PostgreSQL .*scale-out/);
  });

  it("reports every problem at once", () => {
    const { errors } = read({ PORT: "x", MEDIA_ALLOW_PDF: "y", SERVICE_API_KEY: "z" });
    expect(errors.map((problem) => problem.variable)).toEqual(["PORT", "MEDIA_ALLOW_PDF", "SERVICE_API_KEY"]);
  });
});

describe("readEnvironment precedence", () => {
  const file = {
    port: 4100,
    host: "file.local",
    dataDir: "from-file",
    corsOrigins: ["https://file.example"],
    pluginOptions: { media: { allowPdf: true }, webhooks: { secret: WEBHOOK_SECRET } },
  };

  it("uses the config file over defaults", () => {
    const { config, errors } = readEnvironment({}, {}, { cwd, file });
    expect(errors).toEqual([]);
    expect(config).toMatchObject({ port: 4100, host: "file.local", dataDir: join(cwd, "from-file") });
    expect(config.pluginOptions?.media).toEqual({ maxUploadBytes: 25 * 1024 ** 2, allowPdf: true });
  });

  it("uses the environment over the config file and flags over both", () => {
    const env = { PORT: "4200", HOST: "env.local", MEDIA_ALLOW_PDF: "false", SERVICE_CORS_ORIGINS: "*" };
    const { config } = readEnvironment(env, { port: "4300" }, { cwd, file });
    expect(config).toMatchObject({ port: 4300, host: "env.local", corsOrigins: ["*"] });
    expect(config.pluginOptions?.media?.allowPdf).toBe(false);
  });

  it("checks rules across layers: a file secret satisfies environment webhook URLs", () => {
    const { errors } = readEnvironment({ SERVICE_WEBHOOK_URLS: "https://hooks.example/in" }, {}, { cwd, file });
    expect(errors).toEqual([]);
  });

  it("never takes plugins from the file into the configuration", () => {
    const { config } = readEnvironment({}, {}, { cwd, file: { plugins: [{ name: "x" } as never] } });
    expect(config.plugins).toBeUndefined();
  });
});
