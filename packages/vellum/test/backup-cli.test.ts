import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createTestVellum } from "@vellum/core/testing";
import { HEADER_BYTES, parseHeader, writeGeneration } from "@vellum/plugin-backup";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultPlugins } from "../src/index.js";
import { createArticle } from "./support.js";

/** The built binary: these tests run the commands exactly as an operator types them. */
const BIN = fileURLToPath(new URL("../bin/vellum.mjs", import.meta.url));
const DIST = pathToFileURL(fileURLToPath(new URL("../dist/index.js", import.meta.url))).href;
const PASSPHRASE = "correct horse battery staple 42";
/** The cheapest Argon2id the format accepts, through the config file (the default is tested once below). */
const CHEAP_KDF = "{ memoryKiB: 19456, timeCost: 1, parallelism: 1 }";

interface Run {
  status: number;
  stdout: string;
  stderr: string;
}

let root: string;
let dataDir: string;
let target: string;
/** A working directory whose config file makes Argon2 cheap. */
let cwd: string;

function vellum(args: string[], env: Record<string, string> = {}, dir = cwd): Promise<Run> {
  const base = {
    PATH: process.env.PATH ?? "",
    SERVICE_DATA_DIR: dataDir,
    BACKUP_TARGET: target,
    SERVICE_BACKUP_PASSPHRASE: PASSPHRASE,
    SERVICE_LOG_LEVEL: "warn",
    SERVICE_API_KEY: "backup-cli-test-key-0123456789",
  };
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd: dir, env: { ...base, ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const status = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        resolve({ status, stdout, stderr });
      },
    );
  });
}

/** Every regular file under `dir` (relative path → SHA-256), directories excluded. */
function treeHashes(dir: string, skip: (path: string) => boolean = () => false): Map<string, string> {
  const out = new Map<string, string>();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    const rel = relative(dir, path);
    if (!skip(rel)) out.set(rel, createHash("sha256").update(readFileSync(path)).digest("hex"));
  }
  return out;
}

function articles(dbPath: string): unknown[] {
  const db = new Database(dbPath, { readonly: true });
  try {
    return db.prepare("SELECT * FROM articles_items ORDER BY slug").all();
  } finally {
    db.close();
  }
}

const generations = () =>
  readdirSync(target)
    .filter((name) => /^vk-\d{8}-\d{6}\.vpbk$/.test(name))
    .sort();

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "vellum-backup-cli-"));
  dataDir = join(root, "data");
  target = join(root, "target");
  cwd = join(root, "work");
  mkdirSync(target);
  mkdirSync(cwd);
  writeFileSync(
    join(cwd, "vellum.config.mjs"),
    `import { defineConfig } from ${JSON.stringify(DIST)};\nexport default defineConfig({ pluginOptions: { backup: { kdf: ${CHEAP_KDF} } } });\n`,
  );
  const t = await createTestVellum({ plugins: defaultPlugins(), dataDir });
  for (const slug of ["first-post", "second-post", "third-post"]) await createArticle(t, slug, ["news"]);
  await t.close();
  mkdirSync(join(dataDir, "media", "2026", "été"), { recursive: true });
  writeFileSync(join(dataDir, "media", "2026", "été", "photo.webp"), randomBytes(300_000));
  writeFileSync(join(dataDir, "media", "empty.bin"), "");
  writeFileSync(join(dataDir, "settings", "notes.txt"), "kept in the backup\n");
}, 60_000);

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("the seed's command forms on the built binary", () => {
  it("backup, restore -in F -verify, restore -in F -dest D: a byte-identical tree and the same articles", async () => {
    const made = await vellum(["backup"]);
    expect(made.stderr).toBe("");
    expect(made.status).toBe(0);
    const [name] = generations();
    const file = join(target, name as string);
    expect(made.stdout).toMatch(
      new RegExp(`^backup: ${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} \\(\\d+ entries, `),
    );
    expect(statSync(file).mode & 0o777).toBe(0o600);

    for (const args of [
      ["restore", "-in", file, "-verify"],
      ["restore", "--in", file, "--verify"],
    ]) {
      const verified = await vellum(args);
      expect(verified.status, verified.stderr).toBe(0);
      expect(verified.stdout).toMatch(
        /^verified .*: generation [0-9a-f]{32}, created \S+Z, \d+ frames, \d+ bytes, \d+ entries, content root [0-9a-f]{64}; /,
      );
    }

    const dest = join(root, "restored");
    const restored = await vellum(["restore", "-in", file, "-dest", dest]);
    expect(restored.status, restored.stderr).toBe(0);
    expect(restored.stdout).toContain(`into ${dest}\nno previous data dir\n`);
    const live = treeHashes(dataDir, (path) => path.startsWith("db/") || path.startsWith("backup/"));
    const copy = treeHashes(dest, (path) => path.startsWith("db/") || path.startsWith(".vellum/"));
    expect(copy).toEqual(live);
    expect(live.get(join("media", "2026", "été", "photo.webp"))).toBeDefined();
    expect(articles(join(dest, "db", "vellum.sqlite"))).toEqual(articles(join(dataDir, "db", "vellum.sqlite")));
    expect(articles(join(dest, "db", "vellum.sqlite"))).toHaveLength(3);

    const again = await vellum(["restore", "--in", file, "--dest", dest]);
    expect(again.status, again.stderr).toBe(0);
    const kept = /previous data dir kept at: (\S+)\n/.exec(again.stdout)?.[1];
    expect(kept).toMatch(/\.replaced-\d{8}-\d{6}$/);
    expect(existsSync(join(kept as string, "db", "vellum.sqlite"))).toBe(true);
  }, 60_000);

  it.skipIf(!existsSync("/usr/bin/script"))(
    "shows a progress bar with bytes, rate and ETA on a terminal (util-linux script gives it one)",
    async () => {
      const file = join(target, generations()[0] as string);
      const command = [process.execPath, BIN, "restore", "-in", file, "-verify"].map((a) => `'${a}'`).join(" ");
      const tty = await new Promise<string>((resolve) => {
        const env = {
          ...process.env,
          SERVICE_DATA_DIR: dataDir,
          BACKUP_TARGET: target,
          SERVICE_BACKUP_PASSPHRASE: PASSPHRASE,
        };
        execFile("/usr/bin/script", ["-qec", command, "/dev/null"], { cwd, env, timeout: 60_000 }, (_error, stdout) =>
          resolve(stdout),
        );
      });
      expect(tty).toMatch(/verify \[[^\]]+\] 100% \| [\d.]+ MiB\/[\d.]+ MiB \| [\d.]+ MiB\/s \| ETA \w+/);
      expect(tty).toContain("verified ");
    },
    30_000,
  );

  it("--dry-run passes with backups configured; --quiet prints nothing but the path", async () => {
    const dry = await vellum(["--dry-run"]);
    expect(dry.status, dry.stderr).toBe(0);
    expect(dry.stdout).toContain("configuration OK");
    const quiet = await vellum(["backup", "--quiet"]);
    expect(quiet.status, quiet.stderr).toBe(0);
    expect(quiet.stdout).toMatch(/^\/\S+\/vk-\d{8}-\d{6}\.vpbk\n$/);
  }, 30_000);

  it("restore --at picks the newest generation sealed at or before the time, never a later one", async () => {
    const before = generations();
    const between = new Date(Date.now()).toISOString();
    await new Promise((r) => setTimeout(r, 1_100));
    expect((await vellum(["backup", "--quiet"])).status).toBe(0);
    const after = generations();
    expect(after.length).toBe(before.length + 1);
    const dest = join(root, "at");
    const picked = await vellum(["restore", "--at", between, "-dest", dest]);
    expect(picked.status, picked.stderr).toBe(0);
    expect(picked.stdout).toContain(`: ${before.at(-1)} (sealed `);
    const early = await vellum(["restore", "--at", "2001-01-01T00:00:00Z", "-dest", join(root, "never")]);
    expect(early.status).toBe(5);
    expect(early.stderr).toContain("no generation at or before 2001-01-01T00:00:00.000Z");
    const ambiguous = await vellum(["restore", "--at", "2026-01-01T00:00:00", "-dest", join(root, "never")]);
    expect(ambiguous.status).toBe(2);
    expect(existsSync(join(root, "never"))).toBe(false);
  }, 60_000);
});

describe("refusals, each with its exit code and one line", () => {
  it("a wrong passphrase is 3, a flipped byte 1 naming the frame, and verify writes nothing", async () => {
    const file = join(target, generations()[0] as string);
    const wrong = await vellum(["restore", "-in", file, "-verify"], {
      SERVICE_BACKUP_PASSPHRASE: "Correct horse battery staple 42",
    });
    expect(wrong.status).toBe(3);
    expect(wrong.stderr).toContain("E_UNLOCK");
    expect(wrong.stderr).not.toContain("orrect horse");
    const bytes = readFileSync(file);
    bytes[HEADER_BYTES + 100] = (bytes[HEADER_BYTES + 100] as number) ^ 0x01;
    const damaged = join(root, "damaged.vpbk");
    writeFileSync(damaged, bytes);
    const before = treeHashes(root);
    const flipped = await vellum(["restore", "-in", damaged, "-verify"]);
    expect(flipped.status).toBe(1);
    expect(flipped.stderr).toMatch(/E_FRAME_AUTH: .*\(frame 0, byte offset \d+\)/);
    expect(treeHashes(root)).toEqual(before);
    const dest = join(root, "not-restored");
    const refused = await vellum(["restore", "-in", damaged, "-dest", dest]);
    expect(refused.status).toBe(1);
    expect(existsSync(dest)).toBe(false);
  }, 60_000);

  it("BACKUP_OFF=true refuses a backup with 5 but verifies; no target is 2; a live service's data dir is 5", async () => {
    const off = await vellum(["backup"], { BACKUP_OFF: "true" });
    expect(off.status).toBe(5);
    expect(off.stderr).toContain("backups disabled");
    const file = join(target, generations()[0] as string);
    expect((await vellum(["restore", "-in", file, "-verify"], { BACKUP_OFF: "true" })).status).toBe(0);
    const none = await vellum(["backup"], { BACKUP_TARGET: "" });
    expect(none.status).toBe(2);
    expect(none.stderr).toContain("BACKUP_TARGET is not set");
    const usage = await vellum(["restore", "-in", file]);
    expect(usage.status).toBe(2);

    const served = join(root, "served");
    mkdirSync(served);
    writeFileSync(
      join(served, ".vellum.lock"),
      JSON.stringify({ pid: process.pid, startedAt: new Date().toISOString() }),
    );
    const locked = await vellum(["restore", "-in", file, "-dest", served]);
    expect(locked.status).toBe(5);
    expect(locked.stderr).toContain("stop the service first");
    expect(readdirSync(served)).toEqual([".vellum.lock"]);
  }, 60_000);

  it("-verify -deep opens the database image: a sound one passes, a broken foreign key or page is 1 (E_DB_INTEGRITY)", async () => {
    const file = join(target, generations()[0] as string);
    const deep = await vellum(["restore", "-in", file, "-verify", "-deep"]);
    expect(deep.status, deep.stderr).toBe(0);
    const kdf = { memoryKiB: 19_456, timeCost: 1, parallelism: 1 };
    for (const damage of ["foreign key", "page"] as const) {
      const source = join(root, `deep-${damage.replace(" ", "-")}`);
      const into = join(source, "target");
      mkdirSync(join(source, "data", "db"), { recursive: true });
      mkdirSync(into);
      const dbPath = join(source, "data", "db", "vellum.sqlite");
      const db = new Database(dbPath);
      db.exec(
        "CREATE TABLE parent (id INTEGER PRIMARY KEY); CREATE TABLE child (parent INTEGER REFERENCES parent(id));",
      );
      db.exec("CREATE TABLE t (a TEXT); CREATE INDEX t_a ON t (a)");
      const insert = db.prepare("INSERT INTO t (a) VALUES (?)");
      db.transaction(() => {
        for (let i = 0; i < 2000; i++) insert.run(`value-${String(i).padStart(6, "0")}`);
      })();
      if (damage === "foreign key") db.exec("PRAGMA foreign_keys = OFF; INSERT INTO child (parent) VALUES (42)");
      const indexPage = db.prepare("SELECT rootpage FROM sqlite_schema WHERE name = 't_a'").pluck().get() as number;
      db.close();
      if (damage === "page") {
        const bytes = readFileSync(dbPath);
        for (let i = 0; i < 8; i++)
          bytes[indexPage * 4096 - 40 + i] = (bytes[indexPage * 4096 - 40 + i] as number) ^ 0x5a;
        writeFileSync(dbPath, bytes);
      }
      const written = await writeGeneration({
        dataDir: join(source, "data"),
        target: into,
        passphrase: PASSPHRASE,
        kdf,
      });
      expect((await vellum(["restore", "-in", written.path, "-verify"])).status).toBe(0);
      const refused = await vellum(["restore", "-in", written.path, "-verify", "-deep"]);
      expect(refused.status, damage).toBe(1);
      expect(refused.stderr).toContain(
        damage === "page" ? "E_DB_INTEGRITY: PRAGMA integrity_check" : "foreign_key_check",
      );
    }
  }, 60_000);

  it("drill: passes on the MANIFEST's row counts when this data dir kept no record; 5 with BACKUP_OFF", async () => {
    rmSync(join(dataDir, "backup", "generations"), { recursive: true, force: true });
    const drill = await vellum(["drill"]);
    expect(drill.status, drill.stderr).toBe(0);
    expect(drill.stdout).toMatch(/^drill: generation vk-\d{8}-\d{6}\.vpbk restored and checked in \d+ ms\n$/);
    const off = await vellum(["drill"], { BACKUP_OFF: "true" });
    expect(off.status).toBe(5);
    expect(off.stderr).toContain("backups disabled");
  }, 60_000);

  it("a generation written by a newer version is refused with 5 before anything is written", async () => {
    const newer = join(root, "newer-target");
    mkdirSync(newer);
    const kdf = { memoryKiB: 19_456, timeCost: 1, parallelism: 1 };
    const written = await writeGeneration({
      dataDir,
      target: newer,
      passphrase: PASSPHRASE,
      kdf,
      app: { name: "vellum", version: "99.0.0" },
    });
    const dest = join(root, "from-the-future");
    const refused = await vellum(["restore", "-in", written.path, "-dest", dest]);
    expect(refused.status).toBe(5);
    expect(refused.stderr).toContain("E_DB_VERSION: the generation was written by version 99.0.0");
    expect(existsSync(dest)).toBe(false);
    expect(readdirSync(root).filter((name) => name.includes("from-the-future"))).toEqual([]);
  }, 60_000);

  it("--dry-run refuses a target equal to, inside or containing the data dir (a symlink too), and a missing or short passphrase", async () => {
    const link = join(root, "link-to-data");
    symlinkSync(dataDir, link);
    const cases: Array<[Record<string, string>, string]> = [
      [{ BACKUP_TARGET: dataDir }, "BACKUP_TARGET"],
      [{ BACKUP_TARGET: join(dataDir, "backups") }, "BACKUP_TARGET"],
      [{ BACKUP_TARGET: root }, "BACKUP_TARGET"],
      [{ BACKUP_TARGET: join(link, "inside") }, "BACKUP_TARGET"],
      [{ BACKUP_TARGET: join(root, "not-mounted") }, "BACKUP_TARGET"],
      [{ SERVICE_BACKUP_PASSPHRASE: "" }, "SERVICE_BACKUP_PASSPHRASE"],
      [{ SERVICE_BACKUP_PASSPHRASE: "short-secret" }, "SERVICE_BACKUP_PASSPHRASE"],
    ];
    for (const [env, variable] of cases) {
      const run = await vellum(["--dry-run"], env);
      expect(run.status, JSON.stringify(env)).toBe(2);
      expect(run.stderr, JSON.stringify(env)).toContain(variable);
      expect(run.stderr.trim().split("\n"), JSON.stringify(env)).toHaveLength(1);
      expect(run.stderr).not.toContain("short-secret");
    }
    expect((await vellum(["--dry-run"], { SERVICE_BACKUP_PASSPHRASE: "", BACKUP_OFF: "true" })).status).toBe(0);
  }, 60_000);
});

it("without a config file a generation uses the format's default Argon2id (64 MiB, t = 3, p = 4)", async () => {
  const plain = mkdtempSync(join(tmpdir(), "vellum-backup-default-"));
  try {
    const run = await vellum(["backup", "--quiet"], {}, plain);
    expect(run.status, run.stderr).toBe(0);
    const header = parseHeader(readFileSync(run.stdout.trim()).subarray(0, HEADER_BYTES));
    expect(header.kdf).toEqual({ memoryKiB: 65_536, timeCost: 3, parallelism: 4 });
  } finally {
    rmSync(plain, { recursive: true, force: true });
  }
}, 60_000);
