import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { PreparedColumn, PreparedQuery } from "../src/db/prepared.js";
import { openSqlite } from "../src/db/sqlite.js";
import type { QueryListener, VellumDatabase } from "../src/db/types.js";
import { thenNow } from "../src/then-now.js";

let dir: string | undefined;
let database: VellumDatabase | undefined;

afterEach(async () => {
  await database?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  database = undefined;
  dir = undefined;
});

async function open(onQuery?: QueryListener): Promise<VellumDatabase> {
  dir = await mkdtemp(join(tmpdir(), "vellum-read-now-"));
  database = await openSqlite({ path: join(dir, "vellum.sqlite") }, onQuery);
  await sql`CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)`.execute(database.kysely);
  await sql`INSERT INTO notes (id, body) VALUES (1, 'one'), (2, 'two')`.execute(database.kysely);
  return database;
}

function queries(db: VellumDatabase["kysely"]) {
  return {
    byId: new PreparedQuery<{ body: string }>(db.selectFrom("notes").select("body").where("id", "=", 0).compile(), 1),
    bodies: new PreparedColumn<string>(db.selectFrom("notes").select("body").orderBy("id").compile(), 0),
  };
}

describe("reads at once (PreparedQuery.rowsNow, PreparedColumn.valuesNow)", () => {
  it("answer synchronously on the kernel's SQLite connection while no transaction is open", async () => {
    const { kysely } = await open();
    const { byId, bodies } = queries(kysely);
    expect(byId.rowsNow(kysely, [2])).toEqual([{ body: "two" }]);
    expect(byId.rowsNow(kysely, [9])).toEqual([]);
    expect(bodies.valuesNow(kysely, [])).toEqual(["one", "two"]);
  });

  it("wait for an open transaction and never show what it has not committed", async () => {
    const { kysely } = await open();
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
    const { kysely } = await open();
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
    const { kysely } = await open((query) => seen.push(query.sql));
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
    const { kysely } = await open();
    const { byId } = queries(kysely);
    await sql`DROP TABLE notes`.execute(kysely);
    expect(() => byId.rowsNow(kysely, [1])).toThrow(/no such table: notes/);
    await expect(byId.rows(kysely, [1])).rejects.toThrow(/no such table: notes/);
  });
});

describe("thenNow", () => {
  it("applies a function at once to a value and after a promise settles", async () => {
    expect(thenNow(2, (n) => n * 3)).toBe(6);
    const later = thenNow(Promise.resolve(2), (n) => n * 3);
    expect(later).toBeInstanceOf(Promise);
    expect(await later).toBe(6);
    await expect(thenNow(Promise.reject(new Error("no")), () => 1)).rejects.toThrow("no");
  });
});
