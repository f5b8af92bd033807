import { spawn } from "node:child_process";
import { existsSync, readdirSync, readlinkSync, statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { PreparedColumn, PreparedQuery } from "../src/db/prepared.js";
import { readSnapshot } from "../src/db/read-snapshot.js";
import { openSqlite, WAL_AUTOCHECKPOINT_PAGES } from "../src/db/sqlite.js";
import type { AnyDb, QueryListener, VellumDatabase } from "../src/db/types.js";
import { inSavepoint, Writes } from "../src/db/write.js";
import { VellumHookBus } from "../src/hooks/hooks.js";

const MIB = 1024 * 1024;
let dir: string | undefined;
let database: VellumDatabase | undefined;

afterEach(async () => {
  await database?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  database = undefined;
  dir = undefined;
});

async function open(onQuery?: QueryListener): Promise<{ database: VellumDatabase; path: string }> {
  dir = await mkdtemp(join(tmpdir(), "vellum-sqlite-"));
  const path = join(dir, "vellum.sqlite");
  database = await openSqlite({ path }, onQuery);
  return { database, path };
}

describe("the SQLite connection", () => {
  it("waits to switch a database another process is creating to WAL, where SQLite answers busy at once", async () => {
    dir = await mkdtemp(join(tmpdir(), "vellum-sqlite-"));
    const path = join(dir, "vellum.sqlite");
    // Its write lock makes the switch fail at once, busy timeout or not (SQLite's deadlock rule).
    const child = spawn(process.execPath, [
      fileURLToPath(new URL("./fixtures/write-lock-child.mjs", import.meta.url)),
      path,
      "300",
    ]);
    const exited = new Promise((resolve) => child.once("exit", resolve));
    await new Promise((resolve) => child.stdout.once("data", resolve));
    const started = Date.now();
    database = await openSqlite({ path });
    expect(Date.now() - started).toBeGreaterThanOrEqual(200);
    expect(await sql<{ journal_mode: string }>`PRAGMA journal_mode`.execute(database.kysely)).toMatchObject({
      rows: [{ journal_mode: "wal" }],
    });
    await exited;
  });

  it("runs in WAL mode with full sync, foreign keys and the small automatic checkpoint", async () => {
    const { database } = await open();
    const pragma = async (name: string) =>
      Object.values((await sql.raw(`PRAGMA ${name}`).execute(database.kysely)).rows[0] as object)[0];
    expect(await pragma("journal_mode")).toBe("wal");
    expect(await pragma("synchronous")).toBe(2);
    expect(await pragma("foreign_keys")).toBe(1);
    expect(await pragma("wal_autocheckpoint")).toBe(WAL_AUTOCHECKPOINT_PAGES);
    expect(await pragma("temp_store")).toBe(2);
  });

  it.runIf(existsSync("/proc/self/fd"))(
    "keeps a savepoint's statement journal in memory, not in a file of the temp dir (Linux)",
    async () => {
      const { database } = await open();
      const db = database.kysely;
      // SQLite opens its temp files as `etilqs_…` and unlinks them at once: only the open descriptor shows.
      const tempFiles = () =>
        readdirSync("/proc/self/fd")
          .map((fd) => {
            try {
              return readlinkSync(`/proc/self/fd/${fd}`);
            } catch {
              return "";
            }
          })
          .filter((target) => target.includes("etilqs_"));
      await sql`CREATE TABLE blobs (id INTEGER PRIMARY KEY, data BLOB NOT NULL)`.execute(db);
      const seen = await db.transaction().execute(async (trx) => {
        for (let i = 0; i < 64; i++) await sql`INSERT INTO blobs (data) VALUES (${Buffer.alloc(4000, i)})`.execute(trx);
        // 256 KB of pages changed inside a savepoint: a file journal would have spilled past 64 KiB by now.
        await sql`SAVEPOINT big`.execute(trx);
        await sql`UPDATE blobs SET data = zeroblob(4000)`.execute(trx);
        const open = tempFiles();
        await sql`RELEASE big`.execute(trx);
        return open;
      });
      expect(seen).toEqual([]);
    },
  );

  it("keeps the WAL near 4 MB under a stream of small write transactions (24 MB written)", async () => {
    const { database, path } = await open();
    const db = database.kysely;
    await sql`CREATE TABLE blobs (id INTEGER PRIMARY KEY, data BLOB NOT NULL)`.execute(db);
    let largest = 0;
    for (let batch = 0; batch < 96; batch++) {
      await db.transaction().execute(async (trx) => {
        for (let i = 0; i < 16; i++)
          await sql`INSERT INTO blobs (data) VALUES (${Buffer.alloc(16 * 1024, i)})`.execute(trx);
      });
      largest = Math.max(largest, statSync(`${path}-wal`).size);
    }
    // Each commit adds about 256 KB; with checkpoints only at 32 or 64 MB the WAL would reach 24 MB.
    expect(largest).toBeGreaterThan(2 * MIB);
    expect(largest).toBeLessThan(6 * MIB);
  });

  it("takes the write lock at the start of a transaction, and none for a read snapshot", async () => {
    const { database: first, path } = await open();
    const second = await openSqlite({ path, busyTimeoutMs: 100 });
    try {
      await sql`CREATE TABLE notes (n INTEGER)`.execute(first.kysely);
      await sql`INSERT INTO notes VALUES (1)`.execute(first.kysely);
      const count = async (db: typeof first.kysely) =>
        Number((await sql<{ n: number }>`SELECT count(*) AS n FROM notes`.execute(db)).rows[0]?.n);
      const insertFromSecond = () => sql`INSERT INTO notes VALUES (2)`.execute(second.kysely);

      // A transaction holds the write lock from its first statement, a read included: the other
      // connection's write waits for it and, past its busy timeout, gives up.
      await first.kysely.transaction().execute(async (trx) => {
        expect(await count(trx)).toBe(1);
        await expect(insertFromSecond()).rejects.toMatchObject({ code: "SQLITE_BUSY" });
      });

      // A read snapshot holds none: the write goes through, and the snapshot still sees its own view.
      const versions = [first.ops.dataVersion(), second.ops.dataVersion()];
      await readSnapshot(first.kysely, async (snapshot) => {
        expect(await count(snapshot)).toBe(1);
        await insertFromSecond();
        expect(await count(snapshot)).toBe(1);
      });
      expect(await count(first.kysely)).toBe(2);
      // `dataVersion` moves for another connection's commit, never for the connection's own.
      expect(first.ops.dataVersion()).not.toBe(versions[0]);
      expect(second.ops.dataVersion()).toBe(versions[1]);
    } finally {
      await second.close();
    }
  });
});

/** A database with a `notes` table of two rows. */
async function notes(onQuery?: QueryListener): Promise<VellumDatabase> {
  const { database } = await open(onQuery);
  await sql`CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)`.execute(database.kysely);
  await sql`INSERT INTO notes (id, body) VALUES (1, 'one'), (2, 'two')`.execute(database.kysely);
  return database;
}

/** Prepared reads of the `notes` table, run at once by the tests below. */
function queries(db: VellumDatabase["kysely"]) {
  return {
    byId: new PreparedQuery<{ body: string }>(db.selectFrom("notes").select("body").where("id", "=", 0).compile(), 1),
    bodies: new PreparedColumn<string>(db.selectFrom("notes").select("body").orderBy("id").compile(), 0),
  };
}

describe("reads at once (PreparedQuery.rowsNow, PreparedColumn.valuesNow)", () => {
  it("answer synchronously on the kernel's SQLite connection while no transaction is open", async () => {
    const { kysely } = await notes();
    const { byId, bodies } = queries(kysely);
    expect(byId.rowsNow(kysely, [2])).toEqual([{ body: "two" }]);
    expect(byId.rowsNow(kysely, [9])).toEqual([]);
    expect(bodies.valuesNow(kysely, [])).toEqual(["one", "two"]);
  });

  it("wait for an open transaction and never show what it has not committed", async () => {
    const { kysely } = await notes();
    const { byId, bodies } = queries(kysely);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let inserted!: () => void;
    const wrote = new Promise<void>((resolve) => (inserted = resolve));
    const rolledBack = kysely
      .transaction()
      .execute(async (trx) => {
        await sql`INSERT INTO notes (id, body) VALUES (3, 'uncommitted')`.execute(trx);
        await sql`UPDATE notes SET body = 'changed' WHERE id = 1`.execute(trx);
        inserted();
        await held;
        throw new Error("rolled back");
      })
      .catch((error: unknown) => error);
    await wrote;
    const during = byId.rowsNow(kysely, [3]);
    const list = bodies.valuesNow(kysely, []);
    expect(during).toBeInstanceOf(Promise);
    expect(list).toBeInstanceOf(Promise);
    release();
    expect(await rolledBack).toEqual(new Error("rolled back"));
    expect(await during).toEqual([]);
    expect(await list).toEqual(["one", "two"]);
  });

  it("see a transaction's rows once it committed", async () => {
    const { kysely } = await notes();
    const { byId } = queries(kysely);
    await kysely.transaction().execute(async (trx) => {
      await sql`INSERT INTO notes (id, body) VALUES (3, 'three')`.execute(trx);
      // Inside the transaction the executor is the transaction: the normal path, its own rows.
      expect(await byId.rowsNow(trx, [3])).toEqual([{ body: "three" }]);
    });
    expect(byId.rowsNow(kysely, [3])).toEqual([{ body: "three" }]);
  });

  it("are reported to the query listener as the queries kysely runs are", async () => {
    const seen: string[] = [];
    const { kysely } = await notes((query) => seen.push(query.sql));
    const { byId, bodies } = queries(kysely);
    seen.length = 0;
    expect(byId.rowsNow(kysely, [1])).toEqual([{ body: "one" }]);
    expect(await byId.rows(kysely, [1])).toEqual([{ body: "one" }]);
    expect(seen).toHaveLength(2);
    expect(seen[0]).toBe(seen[1]);
    expect(seen[0]).toMatch(/^select "body" from "notes"/);
    await sql`DROP TABLE notes`.execute(kysely);
    seen.length = 0;
    expect(() => bodies.valuesNow(kysely, [])).toThrow(/no such table/);
    expect(seen).toEqual([expect.stringMatching(/select "body" from "notes"/)]);
  });

  it("throw SQLite's error as the normal path rejects with it", async () => {
    const { kysely } = await notes();
    const { byId } = queries(kysely);
    await sql`DROP TABLE notes`.execute(kysely);
    expect(() => byId.rowsNow(kysely, [1])).toThrow(/no such table: notes/);
    await expect(byId.rows(kysely, [1])).rejects.toThrow(/no such table: notes/);
  });
});

/** The kernel's write primitive on `db`, with no hooks and no errors expected. */
function writesOn(db: AnyDb): Writes {
  const fail = (error: unknown) => {
    throw error;
  };
  return new Writes(db, new VellumHookBus(fail), fail);
}

/** A prepared insert of a note. */
const insertNote = (db: AnyDb) =>
  new PreparedQuery(sql`INSERT INTO notes (id, body) VALUES (${0}, ${""})`.compile(db), 2);

describe("statements at once in a transaction the kernel holds (Writes.transaction)", () => {
  it("run the transaction's prepared statements at once, and they see its uncommitted rows", async () => {
    const { kysely } = await notes();
    const { byId, bodies } = queries(kysely);
    const insert = insertNote(kysely);
    let outside: unknown;
    await writesOn(kysely).transaction(kysely, "notes", async (trx) => {
      const changed = insert.run(trx, [3, "three"]);
      expect(byId.rowsNow(trx, [3])).toEqual([{ body: "three" }]);
      expect(bodies.valuesNow(trx, [])).toEqual(["one", "two", "three"]);
      expect(await changed).toBe(1);
      // On the database itself a read waits for the transaction to end.
      outside = byId.rowsNow(kysely, [3]);
      expect(outside).toBeInstanceOf(Promise);
    });
    expect(await outside).toEqual([{ body: "three" }]);
  });

  it("are rolled back with the transaction, and with a savepoint its failing step", async () => {
    const { kysely } = await notes();
    const { bodies } = queries(kysely);
    const insert = insertNote(kysely);
    const failed = writesOn(kysely).transaction(kysely, "notes", async (trx) => {
      await insert.run(trx, [3, "three"]);
      throw new Error("the step failed");
    });
    await expect(failed).rejects.toThrow("the step failed");
    expect(bodies.valuesNow(kysely, [])).toEqual(["one", "two"]);
    await writesOn(kysely).transaction(kysely, "notes", async (trx) => {
      await insert.run(trx, [3, "kept"]);
      const step = inSavepoint(trx, async () => {
        await insert.run(trx, [4, "rolled back"]);
        throw new Error("the subscriber failed");
      });
      await expect(step).rejects.toThrow("the subscriber failed");
      expect(bodies.valuesNow(trx, [])).toEqual(["one", "two", "kept"]);
    });
    expect(bodies.valuesNow(kysely, [])).toEqual(["one", "two", "kept"]);
  });

  it("end with the transaction: its object no longer runs statements at once", async () => {
    const { kysely } = await notes();
    const { byId } = queries(kysely);
    let held: AnyDb | undefined;
    await writesOn(kysely).transaction(kysely, "notes", async (trx) => {
      held = trx;
    });
    const after = byId.rowsNow(held as AnyDb, [1]);
    expect(after).toBeInstanceOf(Promise);
    await (after as Promise<unknown>).catch(() => undefined);
  });

  it("are reported to the query listener, and a transaction kysely runs alone takes kysely's path", async () => {
    const seen: string[] = [];
    const { kysely } = await notes((query) => seen.push(query.sql));
    const { byId } = queries(kysely);
    const insert = insertNote(kysely);
    seen.length = 0;
    await writesOn(kysely).transaction(kysely, "notes", async (trx) => {
      await insert.run(trx, [3, "three"]);
    });
    expect(seen.filter((query) => /^insert into notes/i.test(query))).toHaveLength(1);
    await kysely.transaction().execute(async (trx) => {
      expect(byId.rowsNow(trx, [3])).toBeInstanceOf(Promise);
    });
  });
});
