import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LogLevels } from "consola";
import { describe, expect, it } from "vitest";
import { readEnvironment } from "../src/env.js";
import { formatProblem } from "../src/errors.js";

const cwd = mkdtempSync(join(tmpdir(), "vellum-env-"));
const API_KEY = "k".repeat(40);
const SECRETS = [API_KEY, "hunter2", "short-key"];

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
    expect(config.logLevel).toBe(LogLevels.info);
    expect(config.corsOrigins).toEqual([]);
    expect(config.features).toEqual([]);
    expect(config.security).toEqual({ trustProxy: false });
    expect(config.database).toBeUndefined();
    expect(config.pluginOptions).toBeUndefined();
  });

  it("treats empty variables as unset", () => {
    const { config, errors } = read({ PORT: "", SERVICE_API_KEY: "", SERVICE_BASE_URL: "  " });
    expect(errors).toEqual([]);
    expect(config.port).toBe(3000);
    expect(config.security?.apiKey).toBeUndefined();
    expect(config.baseUrl).toBe("http://127.0.0.1:3000");
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
    });
    expect(config.pluginOptions).toBeUndefined();
  });

  it("accepts trust-proxy booleans and silent logging", () => {
    expect(read({ SERVICE_TRUST_PROXY: "0" }).config.security?.trustProxy).toBe(false);
    expect(read({ SERVICE_TRUST_PROXY: "off" }).config.security?.trustProxy).toBe(false);
    expect(read({ SERVICE_LOG_LEVEL: "silent" }).config.logLevel).toBe(LogLevels.silent);
  });

  it("reads SERVICE_TRUST_PROXY=true as a proxy on loopback, not as any peer", () => {
    expect(read({ SERVICE_TRUST_PROXY: "true" }).config.security?.trustProxy).toEqual(["loopback"]);
    expect(read({ SERVICE_TRUST_PROXY: "TRUE" }).config.security?.trustProxy).toEqual(["loopback"]);
  });

  it("reads SERVICE_TRUST_PROXY hop counts, names and CIDR lists", () => {
    const trust = (value: string) => {
      const { config, errors } = read({ SERVICE_TRUST_PROXY: value });
      expect(errors).toEqual([]);
      return config.security?.trustProxy;
    };
    expect(trust("1")).toBe(1);
    expect(trust("3")).toBe(3);
    expect(trust("loopback")).toEqual(["loopback"]);
    expect(trust("LinkLocal, uniquelocal")).toEqual(["linklocal", "uniquelocal"]);
    expect(trust("loopback,10.0.0.0/8, 172.16.0.0/12 ,2001:DB8::/32,192.0.2.7,::1")).toEqual([
      "loopback",
      "10.0.0.0/8",
      "172.16.0.0/12",
      "2001:db8::/32",
      "192.0.2.7",
      "::1",
    ]);
  });

  it("checks security.trustProxy from the config file as the kernel takes it", () => {
    const problems = (trustProxy: unknown) =>
      readEnvironment({}, {}, { cwd, file: { security: { trustProxy } } as never }).errors;
    for (const good of [false, true, 0, 2, "loopback, 10.0.0.0/8", ["uniquelocal", "2001:db8::/32"], []]) {
      expect(problems(good), JSON.stringify(good)).toEqual([]);
    }
    for (const bad of ["true", "sometimes", ["10.0.0.0/0"], -1, 1.5, { any: true }]) {
      const errors = problems(bad);
      expect(errors, JSON.stringify(bad)).toHaveLength(1);
      expect(errors[0]?.variable).toBe("security.trustProxy");
    }
  });

  it("brackets an IPv6 host in the default base URL and keeps an explicit one", () => {
    expect(read({ HOST: "::1", PORT: "4000" }).config.baseUrl).toBe("http://[::1]:4000");
    expect(read({ SERVICE_BASE_URL: "https://cms.example/api/" }).config.baseUrl).toBe("https://cms.example/api");
  });

  it("derives the base URL from the effective address, flags winning over the environment", () => {
    const { config } = read({ PORT: "4000", HOST: "10.0.0.1" }, { port: "5000", host: "localhost", dataDir: "/d" });
    expect(config).toMatchObject({ port: 5000, host: "localhost", dataDir: "/d", baseUrl: "http://localhost:5000" });
  });

  it("derives no base URL from port 0, whose port is known only once listening: links stay relative", () => {
    expect(read({}, { port: "0" }).config.baseUrl).toBe("");
    expect(read({ PORT: "0", SERVICE_BASE_URL: "https://cms.example" }).config.baseUrl).toBe("https://cms.example");
  });

  it("reads plain and file: database paths", () => {
    expect(read({ SERVICE_DATABASE_URL: "db/main.sqlite" }).config.database).toEqual({
      sqlite: { path: join(cwd, "db/main.sqlite") },
    });
    expect(read({ SERVICE_DATABASE_URL: "file:///tmp/x.sqlite" }).config.database).toEqual({
      sqlite: { path: "/tmp/x.sqlite" },
    });
  });

  it("resolves a relative database path from the config file against the working directory", () => {
    const { config } = readEnvironment({}, {}, { cwd, file: { database: { sqlite: { path: "db/x.sqlite" } } } });
    expect(config.database).toEqual({ sqlite: { path: join(cwd, "db/x.sqlite") } });
    expect(read({ SERVICE_DATABASE_URL: ":memory:" }).config.database).toEqual({ sqlite: { path: ":memory:" } });
  });
});

const BAD: Array<[string, NodeJS.ProcessEnv, Record<string, string>?]> = [
  ["PORT", { PORT: "abc" }],
  ["PORT", { PORT: "70000" }],
  ["--port", {}, { port: "http" }],
  ["--host", {}, { host: "" }],
  ["HOST", { HOST: "bad host" }],
  ["SERVICE_TRUST_PROXY", { SERVICE_TRUST_PROXY: "sometimes" }],
  ["SERVICE_TRUST_PROXY", { SERVICE_TRUST_PROXY: "33" }],
  ["SERVICE_TRUST_PROXY", { SERVICE_TRUST_PROXY: "-1" }],
  ["SERVICE_TRUST_PROXY", { SERVICE_TRUST_PROXY: "1.5" }],
  ["SERVICE_TRUST_PROXY", { SERVICE_TRUST_PROXY: "loopback, bogus" }],
  ["SERVICE_TRUST_PROXY", { SERVICE_TRUST_PROXY: "0.0.0.0/0" }],
  ["SERVICE_TRUST_PROXY", { SERVICE_TRUST_PROXY: "10.0.0.0/33" }],
  ["SERVICE_TRUST_PROXY", { SERVICE_TRUST_PROXY: "2001:db8::/129" }],
  ["SERVICE_TRUST_PROXY", { SERVICE_TRUST_PROXY: "10.0.0.0/255.0.0.0" }],
  ["SERVICE_TRUST_PROXY", { SERVICE_TRUST_PROXY: "fe80::1%eth0" }],
  ["SERVICE_TRUST_PROXY", { SERVICE_TRUST_PROXY: ", ," }],
  ["SERVICE_LOG_LEVEL", { SERVICE_LOG_LEVEL: "loud" }],
  ["SERVICE_BASE_URL", { SERVICE_BASE_URL: "not a url" }],
  ["SERVICE_BASE_URL", { SERVICE_BASE_URL: "ftp://files.example" }],
  ["SERVICE_CORS_ORIGINS", { SERVICE_CORS_ORIGINS: "https://a.example/path" }],
  ["SERVICE_API_KEY", { SERVICE_API_KEY: "short-key" }],
  ["SERVICE_DATABASE_URL", { SERVICE_DATABASE_URL: "postgres://vellum:hunter2@db.example/vellum" }],
  ["SERVICE_DATABASE_URL", { SERVICE_DATABASE_URL: "mysql://vellum:hunter2@db.example/vellum" }],
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
    const { errors } = read({ PORT: "x", SERVICE_API_KEY: "z", SERVICE_LOG_LEVEL: "y" });
    expect(errors.map((problem) => problem.variable)).toEqual(["PORT", "SERVICE_API_KEY", "SERVICE_LOG_LEVEL"]);
  });

  it("checks the config file's values with the same declarations, naming the file key", () => {
    const file = { corsOrigins: ["https://a.example/path"], security: { apiKey: "short-key" } };
    const { errors } = readEnvironment({}, {}, { cwd, file });
    expect(errors).toEqual([
      { variable: "security.apiKey", message: "the key is shorter than 24 characters" },
      { variable: "corsOrigins", message: "'https://a.example/path' is not an origin (scheme://host[:port]) or *" },
    ]);
    expect(readEnvironment({ SERVICE_CORS_ORIGINS: "*", SERVICE_API_KEY: API_KEY }, {}, { cwd, file }).errors).toEqual(
      [],
    );
  });
});

describe("readEnvironment precedence", () => {
  const file = {
    port: 4100,
    host: "file.local",
    dataDir: "from-file",
    corsOrigins: ["https://file.example"],
    pluginOptions: { other: { anything: true } },
  };

  it("uses the config file over defaults and passes its other keys through", () => {
    const { config, errors, sources } = readEnvironment({}, {}, { cwd, file });
    expect(errors).toEqual([]);
    expect(config).toMatchObject({ port: 4100, host: "file.local", dataDir: join(cwd, "from-file") });
    expect(config.pluginOptions).toEqual({ other: { anything: true } });
    expect(sources).toMatchObject({ port: "file", host: "file", corsOrigins: "file", logLevel: "default" });
  });

  it("uses the environment over the config file and flags over both, and says so", () => {
    const env = { PORT: "4200", HOST: "env.local", SERVICE_CORS_ORIGINS: "*" };
    const { config, sources } = readEnvironment(env, { port: "4300" }, { cwd, file });
    expect(config).toMatchObject({ port: 4300, host: "env.local", corsOrigins: ["*"] });
    expect(sources).toMatchObject({
      port: "flag",
      host: "env",
      corsOrigins: "env",
      dataDir: "file",
      baseUrl: "default",
    });
  });

  it("never takes plugins from the file into the configuration", () => {
    const { config } = readEnvironment({}, {}, { cwd, file: { plugins: [{ name: "x" } as never] } });
    expect(config.plugins).toBeUndefined();
  });
});
