import { mkdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { definePlugin, type Migration, migrationChecksum, migrationTableName, VellumError } from "../src/index.js";
import { createTestVellum, type TestVellum } from "../src/testing/index.js";

const open: TestVellum[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const t of open.splice(0)) await t.close().catch(() => undefined);
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

const createTable: Migration = {
  up: (db) =>
    db.schema
      .createTable("shelf_items")
      .addColumn("id", "text", (c) => c.primaryKey())
      .execute(),
};
const addColumn: Migration = {
  up: (db) => db.schema.alterTable("shelf_items").addColumn("label", "text").execute(),
};

const shelf = (migrations: Record<string, Migration>) =>
  definePlugin({ name: "shelf", setup: (ctx) => ctx.migrations(migrations) })();

async function tempDir() {
  const dir = await mkdtemp(join(tmpdir(), "vellum-migrations-"));
  dirs.push(dir);
  return dir;
}

async function boot(migrations: Record<string, Migration>, dataDir: string, config = {}) {
  const t = await createTestVellum({ plugins: [shelf(migrations)], dataDir, config });
  open.push(t);
  return t;
}

async function restart(t: TestVellum) {
  await t.close();
  open.splice(open.indexOf(t), 1);
}

describe("migrations", () => {
  it("applies per plugin into its own table, in name order, and only once across restarts", async () => {
    const dir = await tempDir();
    const first = await boot({ "0001_create": createTable }, dir);
    const applied = await first.vellum
      .db()
      .selectFrom(migrationTableName("shelf"))
      .select(["name", "checksum"])
      .execute();
    expect(applied.map((r) => r.name)).toEqual(["0001_create"]);
    expect(applied[0]?.checksum).toMatch(/^[0-9a-f]{64}$/);
    await restart(first);

    const second = await boot({ "0002_label": addColumn, "0001_create": createTable }, dir);
    const outcome = await second.vellum.migrate();
    expect(outcome.results).toEqual([{ plugin: "shelf", name: "0002_label", status: "applied" }]);
    await second.vellum.db().insertInto("shelf_items").values({ id: "a", label: "x" }).execute();
    const status = await second.vellum.migrationStatus();
    expect(status.pending).toEqual([]);
    expect(status.drift).toEqual([]);
    expect(status.applied.filter((a) => a.plugin === "shelf").map((a) => a.name)).toEqual([
      "0001_create",
      "0002_label",
    ]);
  });

  it("detects drift: a changed checksum and an applied migration missing from the code", async () => {
    const dir = await tempDir();
    await restart(await boot({ "0001_create": createTable, "0002_label": addColumn }, dir));
    const changed: Migration = {
      up: (db) =>
        db.schema
          .createTable("shelf_items")
          .addColumn("id", "integer", (c) => c.primaryKey())
          .execute(),
    };
    const second = await boot({ "0001_create": changed }, dir);
    const status = await second.vellum.migrationStatus();
    expect(status.pending).toEqual([]);
    expect(status.drift).toEqual([
      { plugin: "shelf", name: "0001_create", kind: "checksum_changed" },
      { plugin: "shelf", name: "0002_label", kind: "missing_from_code" },
    ]);
  });

  it("stops the start on a failing migration, names it, and rolls it back", async () => {
    const broken: Migration = {
      async up(db) {
        await db.schema.createTable("shelf_partial").addColumn("id", "text").execute();
        await db.schema.alterTable("no_such_table").addColumn("x", "text").execute();
      },
    };
    const dir = await tempDir();
    const error = await createTestVellum({ plugins: [shelf({ "0001_broken": broken })], dataDir: dir }).catch((e) => e);
    expect(VellumError.is(error, "VELLUM_MIGRATION_FAILED")).toBe(true);
    expect((error as Error).message).toContain("shelf/0001_broken");
    const t = await createTestVellum({ dataDir: dir });
    open.push(t);
    const tables = await t.vellum.db().introspection.getTables();
    expect(tables.map((x) => x.name)).not.toContain("shelf_partial");
  });

  it("waits for another process holding the write lock longer than the busy timeout", async () => {
    // As when two processes start together on a new database: the other one takes the write lock
    // for migration after migration, longer in all than SQLite's busy timeout lets a statement wait.
    const dir = await tempDir();
    const path = join(dir, "db", "vellum.sqlite");
    mkdirSync(join(dir, "db"), { recursive: true });
    const other = new Database(path);
    other.pragma("journal_mode = WAL");
    other.exec("BEGIN IMMEDIATE");
    const released = new Promise<void>((resolve) =>
      setTimeout(() => {
        other.exec("COMMIT");
        other.close();
        resolve();
      }, 800),
    );
    const t = await boot({ "0001_create": createTable }, dir, { database: { sqlite: { path, busyTimeoutMs: 100 } } });
    await released;
    const applied = await t.vellum.db().selectFrom(migrationTableName("shelf")).select("name").execute();
    expect(applied.map((r) => r.name)).toEqual(["0001_create"]);
  });

  it("refuses to start with pending migrations when migrate is off", async () => {
    const dir = await tempDir();
    const error = await createTestVellum({
      plugins: [shelf({ "0001_create": createTable })],
      dataDir: dir,
      config: { migrate: false },
    }).catch((e) => e);
    expect(VellumError.is(error, "VELLUM_MIGRATIONS_PENDING")).toBe(true);
    expect((error as Error).message).toContain("shelf/0001_create");
  });
});

describe("migration checksums", () => {
  const reformatted: Migration = {
    // the same migration as printed by another compiler: other whitespace, a comment, a trailing comma
    up: (db) =>
      db.schema
        .createTable("shelf_items")
        .addColumn(
          "id",
          "text",
          (c) => c.primaryKey(), // primary key
        )
        .execute(),
  };

  it("ignore formatting differences between compilers", () => {
    expect(migrationChecksum("0001_create", reformatted)).toBe(migrationChecksum("0001_create", createTable));
  });

  it("change when a token changes", () => {
    const changed: Migration = {
      up: (db) =>
        db.schema
          .createTable("shelf_items")
          .addColumn("id", "integer", (c) => c.primaryKey())
          .execute(),
    };
    expect(migrationChecksum("0001_create", changed)).not.toBe(migrationChecksum("0001_create", createTable));
    expect(migrationChecksum("0002_create", createTable)).not.toBe(migrationChecksum("0001_create", createTable));
  });
});
