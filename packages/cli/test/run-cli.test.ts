import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import {
  type AnyVellumPlugin,
  createVellum,
  definePlugin,
  type MigrationSet,
  readJsonBody,
  type VellumPlugin,
} from "@vellum/core";
import type { VellumServer } from "@vellum/core/node";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type CliOptions, runCli } from "../src/index.js";
import { connectionError, removeTempDirs, tempDir, writeConfigFile } from "./support.js";

// Everything here is real: the kernel, SQLite files in temporary directories, HTTP on 127.0.0.1. Only the
// process's stdout/stderr streams are intercepted, to read what the CLI prints.

const API_KEY = "k".repeat(32);
const KEY_LINE = /^vellum: generated an API key, stored in (.+) \(shown only this once\): ([A-Za-z0-9_-]{43})$/;

let out: string[];
let err: string[];
let servers: VellumServer[];
let blockers: Server[];

function capture(stream: NodeJS.WriteStream, into: () => string[]) {
  vi.spyOn(stream, "write").mockImplementation((chunk: string | Uint8Array) => {
    into().push(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8"));
    return true;
  });
}

const lines = (chunks: string[]) => chunks.join("").split("\n").slice(0, -1);
const stdout = () => lines(out);
const stderr = () => lines(err);

beforeEach(() => {
  out = [];
  err = [];
  servers = [];
  blockers = [];
  capture(process.stdout, () => out);
  capture(process.stderr, () => err);
});

afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(servers.map((server) => server.close()));
  await Promise.all(blockers.map((server) => new Promise((resolve) => server.close(resolve))));
  removeTempDirs();
});

// --- real plugins -------------------------------------------------------------------------------------------

const alpha = definePlugin({ name: "alpha", setup() {} });
const beta = definePlugin({ name: "beta", dependsOn: ["alpha"], setup() {} });

const NOTES_V1: MigrationSet = {
  "0001_notes": {
    async up(db) {
      await db.schema
        .createTable("notes")
        .addColumn("id", "integer", (column) => column.primaryKey())
        .addColumn("body", "text", (column) => column.notNull())
        .execute();
    },
  },
};

/** A plugin with real migrations, a read route, a write route and a slow route; it records when it closes. */
function notesPlugin(migrations: MigrationSet = NOTES_V1, events: string[] = []): AnyVellumPlugin {
  return definePlugin<Record<string, unknown>, { notes: { id?: number; body: string } }>({
    name: "notes",
    setup(ctx) {
      ctx.migrations(migrations);
      ctx.router.get("/api/v1/notes", async () => ({
        notes: await ctx.db.selectFrom("notes").select(["body"]).orderBy("id").execute(),
      }));
      ctx.router.post("/api/v1/notes", async (event) => {
        const { body } = (await readJsonBody(event)) as { body: string };
        await ctx.db.insertInto("notes").values({ body }).execute();
        return { stored: body };
      });
      ctx.router.get("/api/v1/slow", async () => {
        events.push("slow started");
        await new Promise((resolve) => setTimeout(resolve, 300));
        events.push("slow finished");
        return { slept: 300 };
      });
      ctx.onClose(() => {
        events.push("closed");
      });
    },
  })();
}

// --- running the CLI ------------------------------------------------------------------------------------------

interface RunOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  plugins?: () => VellumPlugin[];
}

async function run(argv: string[], options: RunOptions = {}) {
  const cwd = options.cwd ?? tempDir();
  let server: VellumServer | undefined;
  const cli: CliOptions = {
    argv,
    env: { SERVICE_LOG_LEVEL: "warn", ...options.env },
    cwd,
    defaultPlugins: options.plugins ?? (() => [beta(), alpha()]),
    version: "9.9.9",
    signals: false,
    onListen: (listening) => {
      server = listening;
      servers.push(listening);
    },
  };
  const code = await runCli(cli);
  return { code, cwd, server };
}

/** Starts `serve` on an ephemeral port in a data directory and returns the running server. */
async function serve(dataDir: string, options: RunOptions = {}) {
  const result = await run(["serve", "--port", "0", "--host", "127.0.0.1", "--data-dir", dataDir], options);
  expect(stderr()).toEqual([]);
  expect(result.code).toBe(0);
  if (!result.server) throw new Error("serve did not report a listening server");
  return result.server;
}

/** Headers for a write to a running server: the key, plus the CSRF cookie/header pair from a real GET. */
async function writeHeaders(url: string, key: string): Promise<Record<string, string>> {
  const response = await fetch(`${url}/docs/api/errors`);
  await response.body?.cancel();
  const cookie = response.headers
    .getSetCookie()
    .find((entry) => entry.startsWith("svc_csrf="))
    ?.split(";")[0];
  const token = cookie?.slice("svc_csrf=".length) ?? "";
  return {
    authorization: `Bearer ${key}`,
    cookie: cookie ?? "",
    "x-csrf-token": token,
    "content-type": "application/json",
  };
}

async function postNote(url: string, key: string, body: string): Promise<number> {
  const response = await fetch(`${url}/api/v1/notes`, {
    method: "POST",
    headers: await writeHeaders(url, key),
    body: JSON.stringify({ body }),
  });
  await response.body?.cancel();
  return response.status;
}

// --- dry run --------------------------------------------------------------------------------------------------

describe("vellum --dry-run", () => {
  it("checks everything, resolves the real plugin graph, prints one summary line and touches no data", async () => {
    const { code, cwd } = await run(["--dry-run"], { env: { SERVICE_API_KEY: API_KEY } });
    expect(stderr()).toEqual([]);
    expect(stdout()).toEqual([
      `vellum 9.9.9: configuration OK; 2 plugin(s) (alpha, beta); would listen on 127.0.0.1:3000; ` +
        `data directory ${join(cwd, "data")}; base URL http://127.0.0.1:3000`,
    ]);
    expect(code).toBe(0);
    expect(existsSync(join(cwd, "data"))).toBe(false);
  });

  it("exits 2 with one line per problem", async () => {
    const { code, cwd } = await run(["-dry-run"], { env: { PORT: "abc", SERVICE_API_KEY: "short" } });
    expect(code).toBe(2);
    expect(stdout()).toEqual([]);
    expect(err.join("")).toBe(
      "vellum: PORT: 'abc' is not a port number (0-65535)\nvellum: SERVICE_API_KEY: the key is shorter than 24 characters\n",
    );
    expect(existsSync(join(cwd, "data"))).toBe(false);
  });

  it("checks its address flags", async () => {
    const { code } = await run(["--dry-run", "-port", "x"]);
    expect(code).toBe(2);
    expect(err.join("")).toBe("vellum: --port: 'x' is not a port number (0-65535)\n");
  });

  it("flags a stored API key that is too short", async () => {
    const cwd = tempDir();
    mkdirSync(join(cwd, "data", "settings"), { recursive: true });
    writeFileSync(join(cwd, "data", "settings", "api-key"), "tiny-stored-key\n");
    const { code } = await run(["--dry-run"], { cwd });
    expect(code).toBe(2);
    expect(stderr()).toHaveLength(1);
    expect(stderr()[0]).toMatch(/^vellum: SERVICE_API_KEY: the key stored in .*api-key is shorter than 24/);
    expect(stderr()[0]).not.toContain("tiny-stored-key");
  });

  it("exits 2 with the kernel's error code when the plugin graph has a cycle", async () => {
    const left = definePlugin({ name: "left", dependsOn: ["right"], setup() {} });
    const right = definePlugin({ name: "right", dependsOn: ["left"], setup() {} });
    const { code, cwd } = await run(["--dry-run"], { plugins: () => [left(), right()] });
    expect(code).toBe(2);
    expect(stdout()).toEqual([]);
    expect(err.join("")).toBe(
      "vellum: VELLUM_PLUGIN_DEPENDENCY_CYCLE: plugin dependencies form a cycle: left -> right -> left\n",
    );
    expect(existsSync(join(cwd, "data"))).toBe(false);
  });

  it("appends the config file's plugins after the defaults, skipping falsy entries", async () => {
    const cwd = tempDir();
    writeConfigFile(
      cwd,
      [
        "const extra = definePlugin({ name: 'extra', setup() {} });",
        "export default defineConfig({ plugins: [extra(), null, false] });",
      ].join("\n"),
    );
    const { code } = await run(["--dry-run"], { cwd });
    expect(stderr()).toEqual([]);
    expect(code).toBe(0);
    expect(stdout()[0]).toContain("configuration OK; 3 plugin(s) (alpha, beta, extra)");
  });

  it("rejects a config-file plugin that duplicates a default one", async () => {
    const cwd = tempDir();
    writeConfigFile(cwd, "export default defineConfig({ plugins: [definePlugin({ name: 'alpha', setup() {} })()] });");
    const { code } = await run(["--dry-run"], { cwd });
    expect(code).toBe(2);
    expect(stderr()).toHaveLength(1);
    expect(stderr()[0]).toMatch(/^vellum: VELLUM_PLUGIN_DUPLICATE: .*alpha/);
  });
});

// --- usage ----------------------------------------------------------------------------------------------------

describe("usage", () => {
  it("exits 2 on an unknown command or option, and on no command, starting nothing", async () => {
    const unknown = await run(["frobnicate"]);
    expect(unknown.code).toBe(2);
    expect(stderr()).toEqual(["vellum: unknown command 'frobnicate'", "vellum: run 'vellum --help' for usage"]);
    err.length = 0;
    const typo = await run(["serve", "--prot", "1"]);
    expect(typo.code).toBe(2);
    expect(stderr()).toEqual(["vellum: unknown option '--prot'", "vellum: run 'vellum --help' for usage"]);
    expect((await run([])).code).toBe(2);
    expect((await run(["--dry-run", "serve"])).code).toBe(2);
    expect(servers).toEqual([]);
    for (const { cwd } of [unknown, typo]) expect(existsSync(join(cwd, "data"))).toBe(false);
  });

  it("prints help and the version with exit 0", async () => {
    expect((await run(["serve", "--help"])).code).toBe(0);
    expect(out.join("")).toContain("--data-dir");
    out.length = 0;
    expect((await run(["--version"])).code).toBe(0);
    expect(out).toEqual(["9.9.9\n"]);
  });
});

// --- serve ----------------------------------------------------------------------------------------------------

describe("vellum serve", () => {
  it("generates the API key once, serves the real kernel with it, and reuses it on the next start", async () => {
    const dataDir = join(tempDir(), "data");
    const plugins = () => [notesPlugin()];
    const first = await serve(dataDir, { plugins });
    const announced = stdout().filter((line) => line.includes("generated an API key"));
    expect(announced).toHaveLength(1);
    const [, path, key] = KEY_LINE.exec(announced[0] ?? "") ?? [];
    expect(path).toBe(join(dataDir, "settings", "api-key"));
    expect(readFileSync(join(dataDir, "settings", "api-key"), "utf8")).toBe(`${key}\n`);
    expect(statSync(join(dataDir, "settings", "api-key")).mode & 0o777).toBe(0o600);

    expect((await fetch(`${first.url}/docs/api/errors`)).status).toBe(200);
    expect(await postNote(first.url, "w".repeat(43), "refused")).toBe(401);
    expect(await postNote(first.url, key ?? "", "first")).toBe(200);
    await first.close();
    await expect(connectionError(`${first.url}/docs/api/errors`)).resolves.toBe("ECONNREFUSED");

    out.length = 0;
    const second = await serve(dataDir, { plugins });
    expect(out.join("")).not.toContain("generated an API key");
    expect(out.join("")).not.toContain(key);
    expect(await postNote(second.url, key ?? "", "second")).toBe(200);
    const listed = await (await fetch(`${second.url}/api/v1/notes`)).json();
    expect(listed).toEqual({ notes: [{ body: "first" }, { body: "second" }] });
  });

  it("lets SERVICE_API_KEY win over the stored key", async () => {
    const dataDir = join(tempDir(), "data");
    mkdirSync(join(dataDir, "settings"), { recursive: true });
    writeFileSync(join(dataDir, "settings", "api-key"), `${"s".repeat(43)}\n`);
    const server = await serve(dataDir, { plugins: () => [notesPlugin()], env: { SERVICE_API_KEY: API_KEY } });
    expect(out.join("")).not.toContain("generated an API key");
    expect(await postNote(server.url, "s".repeat(43), "stored")).toBe(401);
    expect(await postNote(server.url, API_KEY, "env")).toBe(200);
  });

  it("logs where it listens and answers on the flag address", async () => {
    const dataDir = join(tempDir(), "data");
    const server = await serve(dataDir, { env: { SERVICE_LOG_LEVEL: "info", SERVICE_API_KEY: API_KEY } });
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.url).not.toMatch(/:0$/);
    expect(out.join("")).toContain(`vellum 9.9.9 listening on ${server.url} (data directory ${dataDir})`);
    expect((await fetch(`${server.url}/docs/api/errors`)).status).toBe(200);
  });

  it("serves the routes of the config file's plugins", async () => {
    const cwd = tempDir();
    writeConfigFile(
      cwd,
      [
        "const extra = definePlugin({",
        "  name: 'extra',",
        "  dependsOn: ['alpha'],",
        "  setup(ctx) { ctx.router.get('/api/v1/extra', () => ({ from: 'config file', plugins: ctx.kernel.version })); },",
        "});",
        "export default defineConfig({ plugins: [extra()] });",
      ].join("\n"),
    );
    const server = await serve(join(cwd, "data"), { cwd, env: { SERVICE_API_KEY: API_KEY } });
    const response = await fetch(`${server.url}/api/v1/extra`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ from: "config file", plugins: "9.9.9" });
  });

  it("shuts down gracefully through the server it hands to onListen", async () => {
    const events: string[] = [];
    const server = await serve(join(tempDir(), "data"), {
      plugins: () => [notesPlugin(NOTES_V1, events)],
      env: { SERVICE_API_KEY: API_KEY },
    });
    const inFlight = fetch(`${server.url}/api/v1/slow`).then(async (r) => ({ status: r.status, body: await r.json() }));
    await vi.waitFor(() => expect(events).toContain("slow started"), { timeout: 5_000, interval: 10 });
    await server.close();
    expect(await inFlight).toEqual({ status: 200, body: { slept: 300 } });
    expect(events).toEqual(["slow started", "slow finished", "closed"]);
    await expect(connectionError(`${server.url}/docs/api/errors`)).resolves.toBe("ECONNREFUSED");
  });

  it("refuses to start on bad configuration without touching the data directory", async () => {
    const { code, cwd } = await run(["serve"], { env: { SERVICE_TRUST_PROXY: "sometimes" } });
    expect(code).toBe(2);
    expect(stderr()).toEqual([
      "vellum: SERVICE_TRUST_PROXY: 'sometimes' is not a proxy name, IP address or CIDR (expected false, true, a hop count, or a comma list of loopback, linklocal, uniquelocal, addresses and CIDRs)",
    ]);
    expect(servers).toEqual([]);
    expect(existsSync(join(cwd, "data"))).toBe(false);
  });

  it("exits 2 on a plugin cycle, with the same line as the dry run", async () => {
    const left = definePlugin({ name: "left", dependsOn: ["right"], setup() {} });
    const right = definePlugin({ name: "right", dependsOn: ["left"], setup() {} });
    const { code } = await run(["serve", "--port", "0"], {
      plugins: () => [left(), right()],
      env: { SERVICE_API_KEY: API_KEY },
    });
    expect(code).toBe(2);
    expect(stderr()).toEqual([
      "vellum: VELLUM_PLUGIN_DEPENDENCY_CYCLE: plugin dependencies form a cycle: left -> right -> left",
    ]);
    expect(servers).toEqual([]);
  });

  it("exits 1 and closes the plugins already set up when a plugin fails during setup", async () => {
    const events: string[] = [];
    const boom = definePlugin({
      name: "boom",
      setup() {
        throw new Error("boom");
      },
    });
    const { code } = await run(["serve", "--port", "0"], {
      plugins: () => [notesPlugin(NOTES_V1, events), boom()],
      env: { SERVICE_API_KEY: API_KEY },
    });
    expect(code).toBe(1);
    expect(stderr()).toEqual(["vellum: VELLUM_PLUGIN_SETUP_FAILED: plugin 'boom' failed during setup: boom"]);
    expect(events).toEqual(["closed"]);
    expect(servers).toEqual([]);
  });

  it("exits 1 when the port is taken, after closing the kernel", async () => {
    const blocker = createServer();
    blockers.push(blocker);
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const port = (blocker.address() as { port: number }).port;
    const events: string[] = [];
    const { code } = await run(["serve", "--port", String(port)], {
      plugins: () => [notesPlugin(NOTES_V1, events)],
      env: { SERVICE_API_KEY: API_KEY },
    });
    expect(code).toBe(1);
    expect(stderr()).toEqual([`vellum: listen EADDRINUSE: address already in use 127.0.0.1:${port}`]);
    expect(events).toEqual(["closed"]);
    expect(servers).toEqual([]);
  });
});

// --- migrate --------------------------------------------------------------------------------------------------

const NOTES_V2_BROKEN: MigrationSet = {
  ...NOTES_V1,
  "0002_broken": {
    async up(db) {
      await db.schema.alterTable("missing_table").addColumn("x", "text").execute();
    },
  },
};

const NOTES_V2_FIXED: MigrationSet = {
  ...NOTES_V1,
  "0002_fixed": {
    async up(db) {
      await db.schema.alterTable("notes").addColumn("tag", "text").execute();
    },
  },
};

/** Tables and applied migrations of a data directory, read back through a fresh kernel. */
async function inspect(dataDir: string, migrations: MigrationSet) {
  const vellum = createVellum({ dataDir, plugins: [notesPlugin(migrations)], logLevel: 0 });
  try {
    await vellum.init();
    const tables = (await vellum.db().introspection.getTables()).map((table) => ({
      name: table.name,
      columns: table.columns.map((column) => column.name),
    }));
    const status = await vellum.migrationStatus();
    return {
      notes: tables.find((table) => table.name === "notes"),
      applied: status.applied.filter((row) => row.plugin === "notes").map((row) => row.name),
      pending: status.pending.filter((row) => row.plugin === "notes").map((row) => row.name),
    };
  } finally {
    await vellum.close();
  }
}

describe("vellum migrate", () => {
  it("applies a plugin's real migrations, prints a row each, and has nothing to do the second time", async () => {
    const dataDir = join(tempDir(), "data");
    const plugins = () => [notesPlugin()];
    const first = await run(["migrate", "--data-dir", dataDir], { plugins });
    expect(stderr()).toEqual([]);
    expect(first.code).toBe(0);
    const printed = stdout();
    expect(printed[0]).toMatch(/^PLUGIN +MIGRATION +STATUS +ERROR$/);
    expect(printed).toContainEqual(expect.stringMatching(/^notes +0001_notes +applied$/));
    expect(printed).toContainEqual(expect.stringMatching(/^core +\S+ +applied$/));
    expect(printed.at(-1)).toMatch(/^vellum: migrations: \d+ applied$/);
    expect(await inspect(dataDir, NOTES_V1)).toEqual({
      notes: { name: "notes", columns: ["id", "body"] },
      applied: ["0001_notes"],
      pending: [],
    });

    out.length = 0;
    const second = await run(["migrate", "--data-dir", dataDir], { plugins });
    expect(second.code).toBe(0);
    expect(stdout()).toEqual(["vellum: no pending migrations"]);
  });

  it("exits 1 on a failing migration, prints the failed row, keeps earlier ones and applies the fix later", async () => {
    const dataDir = join(tempDir(), "data");
    const broken = await run(["migrate", "--data-dir", dataDir], { plugins: () => [notesPlugin(NOTES_V2_BROKEN)] });
    expect(broken.code).toBe(1);
    const printed = stdout();
    expect(printed).toContainEqual(expect.stringMatching(/^notes +0001_notes +applied$/));
    expect(printed).toContainEqual(expect.stringMatching(/^notes +0002_broken +failed +no such table: missing_table$/));
    expect(printed.at(-1)).toMatch(/^vellum: migrations: \d+ applied, 1 failed$/);
    expect(stderr()).toEqual(["vellum: migration notes/0002_broken failed: no such table: missing_table"]);
    expect(await inspect(dataDir, NOTES_V2_BROKEN)).toMatchObject({
      applied: ["0001_notes"],
      pending: ["0002_broken"],
    });

    out.length = 0;
    err.length = 0;
    const fixed = await run(["migrate", "--data-dir", dataDir], { plugins: () => [notesPlugin(NOTES_V2_FIXED)] });
    expect(stderr()).toEqual([]);
    expect(fixed.code).toBe(0);
    expect(stdout()).toEqual([
      "PLUGIN  MIGRATION   STATUS   ERROR",
      "------  ----------  -------  -----",
      "notes   0002_fixed  applied",
      "vellum: migrations: 1 applied",
    ]);
    expect(await inspect(dataDir, NOTES_V2_FIXED)).toEqual({
      notes: { name: "notes", columns: ["id", "body", "tag"] },
      applied: ["0001_notes", "0002_fixed"],
      pending: [],
    });
  });

  it("refuses bad configuration with exit 2 before opening the database", async () => {
    const { code, cwd } = await run(["migrate"], { env: { SERVICE_API_KEY: "short" }, plugins: () => [notesPlugin()] });
    expect(code).toBe(2);
    expect(stderr()).toEqual(["vellum: SERVICE_API_KEY: the key is shorter than 24 characters"]);
    expect(existsSync(join(cwd, "data"))).toBe(false);
  });
});
