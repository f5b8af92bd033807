import Database from "better-sqlite3";
import { Kysely, SqliteDialect, sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { PreparedColumn, PreparedInsert, PreparedQuery } from "../src/db/prepared.js";
import { COLUMN_SQL_PREFIX, withStatementCache } from "../src/db/statement-cache.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests use ad-hoc tables
type AnyDb = Kysely<any>;

const open: AnyDb[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((db) => db.destroy()));
});

/** An in-memory database with rows of text, blobs and nulls; `cached` wraps it as the kernel does. */
async function database(cached: boolean): Promise<AnyDb> {
  const raw = new Database(":memory:");
  const db: AnyDb = new Kysely({ dialect: new SqliteDialect({ database: cached ? withStatementCache(raw) : raw }) });
  open.push(db);
  await sql`CREATE TABLE t (id INTEGER PRIMARY KEY, doc TEXT, data BLOB)`.execute(db);
  await sql`INSERT INTO t (doc, data) VALUES ('{"a":1}', x'0102'), ('second', x'ff'), (NULL, NULL)`.execute(db);
  return db;
}

describe("PreparedColumn", () => {
  it("returns the first column's values, in a transaction too, on the kernel's connection and on a plain one", async () => {
    for (const cached of [true, false]) {
      const db = await database(cached);
      const docs = new PreparedColumn<string | null>(db.selectFrom("t").select("doc").where("id", "<", 9).compile(), 1);
      const blobs = new PreparedColumn<Buffer | null>(db.selectFrom("t").select(["data", "id"]).compile(), 0);
      expect(await docs.values(db, [9])).toEqual(['{"a":1}', "second", null]);
      expect(await docs.values(db, [2])).toEqual(['{"a":1}']);
      expect(await blobs.values(db, [])).toEqual([Buffer.from([1, 2]), Buffer.from([255]), null]);
      expect(await db.transaction().execute((trx) => docs.values(trx, [3]))).toEqual(['{"a":1}', "second"]);
    }
  });

  it("refuses a parameter count that does not match the compiled query", async () => {
    const db = await database(true);
    expect(() => new PreparedColumn(db.selectFrom("t").select("doc").where("id", "=", 1).compile(), 0)).toThrow(
      /1 parameters, expected 0/,
    );
  });
});

describe("PreparedInsert", () => {
  it("inserts any number of rows in order, 64 a statement, inside a transaction too", async () => {
    const statements: number[] = [];
    const db: AnyDb = new Kysely({
      dialect: new SqliteDialect({ database: withStatementCache(new Database(":memory:")) }),
      log: (event) => void (event.query.sql.startsWith("insert") && statements.push(event.query.parameters.length / 2)),
    });
    open.push(db);
    await sql`CREATE TABLE r (n INTEGER, label TEXT)`.execute(db);
    const insert = new PreparedInsert(db, "r", ["n", "label"]);
    let next = 0;
    const rows = (count: number) => Array.from({ length: count }, () => [++next, `row ${next}`]);
    for (const count of [0, 1, 64, 65, 130]) await insert.run(db, rows(count));
    // Rows per statement: none for no rows, then at most 64.
    expect(statements).toEqual([1, 64, 64, 1, 64, 64, 2]);
    await db.transaction().execute((trx) => insert.run(trx, rows(3)));
    await expect(
      db.transaction().execute(async (trx) => {
        await insert.run(trx, rows(2));
        throw new Error("rolled back");
      }),
    ).rejects.toThrow("rolled back");
    const stored = await db.selectFrom("r").select(["n", "label"]).orderBy("rowid").execute();
    expect(stored.map((row) => row.n)).toEqual(Array.from({ length: 263 }, (_, i) => i + 1));
    expect(stored[262]).toEqual({ n: 263, label: "row 263" });
  });

  it("refuses a row whose values do not match the columns", async () => {
    const db = await database(true);
    const insert = new PreparedInsert(db, "t", ["doc", "data"]);
    await expect(insert.run(db, [["only one"]])).rejects.toThrow("a row of 1 values for the 2 columns of t");
    expect(await db.selectFrom("t").select("id").execute()).toHaveLength(3);
  });
});

describe("the statement cache", () => {
  it("prepares SQL marked as a column query in pluck mode, and the same SQL unmarked as rows", () => {
    const cache = withStatementCache(new Database(":memory:"));
    try {
      const query = "SELECT 'x' AS doc, 2 AS n";
      expect(cache.prepare(`${COLUMN_SQL_PREFIX}${query}`).all()).toEqual(["x"]);
      expect(cache.prepare(query).all()).toEqual([{ doc: "x", n: 2 }]);
      expect(cache.prepare(`${COLUMN_SQL_PREFIX}${query}`).all()).toEqual(["x"]);
    } finally {
      cache.close();
    }
  });

  it("keeps PreparedQuery rows as objects", async () => {
    const db = await database(true);
    const rows = new PreparedQuery<{ doc: string }>(db.selectFrom("t").select("doc").where("id", "=", 2).compile(), 1);
    expect(await rows.rows(db, [2])).toEqual([{ doc: "second" }]);
  });
});
