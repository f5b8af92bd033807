import { statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { openSqlite, WAL_AUTOCHECKPOINT_PAGES } from "../src/db/sqlite.js";
import type { VellumDatabase } from "../src/db/types.js";

const MIB = 1024 * 1024;
let dir: string | undefined;
let database: VellumDatabase | undefined;

afterEach(async () => {
  await database?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  database = undefined;
  dir = undefined;
});

async function open(): Promise<{ database: VellumDatabase; path: string }> {
  dir = await mkdtemp(join(tmpdir(), "vellum-sqlite-"));
  const path = join(dir, "vellum.sqlite");
  database = await openSqlite({ path });
  return { database, path };
}

describe("the SQLite connection", () => {
  it("runs in WAL mode with full sync, foreign keys and the small automatic checkpoint", async () => {
    const { database } = await open();
    const pragma = async (name: string) =>
      Object.values((await sql.raw(`PRAGMA ${name}`).execute(database.kysely)).rows[0] as object)[0];
    expect(await pragma("journal_mode")).toBe("wal");
    expect(await pragma("synchronous")).toBe(2);
    expect(await pragma("foreign_keys")).toBe(1);
    expect(await pragma("wal_autocheckpoint")).toBe(WAL_AUTOCHECKPOINT_PAGES);
  });

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
});
