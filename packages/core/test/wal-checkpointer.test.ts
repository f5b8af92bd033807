import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { openSqlite } from "../src/db/sqlite.js";
import type { VellumDatabase } from "../src/db/types.js";
import type { BackgroundCheckpoint } from "../src/db/wal-checkpointer.js";
import { startWalCheckpointer } from "../src/db/wal-checkpointer.js";

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

const MIB = 1024 * 1024;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(done: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error("condition not reached in time");
    await sleep(10);
  }
}

async function tempDb(options: Parameters<typeof openSqlite>[0]["backgroundCheckpoint"], errors: Error[]) {
  const dir = await mkdtemp(join(tmpdir(), "vellum-wal-"));
  dirs.push(dir);
  const path = join(dir, "wal.sqlite");
  const db = await openSqlite({ path, backgroundCheckpoint: options }, (error) => errors.push(error));
  await sql`CREATE TABLE blobs (data BLOB NOT NULL)`.execute(db.kysely);
  return { db, path };
}

async function writeMiB(db: VellumDatabase, mib: number): Promise<void> {
  for (let i = 0; i < mib * 4; i++) {
    await sql`INSERT INTO blobs (data) VALUES (${Buffer.alloc(256 * 1024, i % 251)})`.execute(db.kysely);
  }
}

describe("background WAL checkpoints", () => {
  it("copy the WAL into the database from a thread, so later writes reuse it instead of growing it", async () => {
    const errors: Error[] = [];
    const { db, path } = await tempDb({ intervalMs: 20, startBytes: MIB }, errors);
    await writeMiB(db, 8);
    const grown = (await stat(`${path}-wal`)).size;
    expect(grown).toBeGreaterThan(8 * MIB);
    // Wait until the thread has checkpointed everything, then write as much again: SQLite
    // restarts a fully checkpointed WAL from its start, so the file does not grow.
    const seen: BackgroundCheckpoint[] = [];
    const probe = startWalCheckpointer({
      path,
      intervalMs: 20,
      startBytes: 0,
      onCheckpoint: (c) => seen.push(c),
      onError: (error) => errors.push(error),
    });
    await until(() => seen.some((c) => c.log > 0 && c.checkpointed === c.log));
    await probe.stop();
    await writeMiB(db, 8);
    expect((await stat(`${path}-wal`)).size).toBeLessThanOrEqual(grown);
    const [row] = (await sql<{ n: number }>`SELECT count(*) AS n FROM blobs`.execute(db.kysely)).rows;
    expect(row?.n).toBe(64);
    await db.close();
    expect(errors).toEqual([]);
  });

  it("start only once the WAL reaches the threshold, and stop cleanly on close", async () => {
    const errors: Error[] = [];
    const { db, path } = await tempDb({ intervalMs: 20, startBytes: 64 * MIB }, errors);
    await writeMiB(db, 2);
    await sleep(100);
    // Below the threshold nothing checkpointed: the frames are all still in the WAL.
    const [frames] = (
      await sql<{ log: number; checkpointed: number }>`PRAGMA wal_checkpoint(PASSIVE)`.execute(db.kysely)
    ).rows;
    expect(frames?.log).toBeGreaterThan(0);
    await db.close();
    await expect(stat(`${path}-wal`)).rejects.toThrow();
    expect(errors).toEqual([]);
  });

  it("are off for :memory: and when disabled", async () => {
    const memory = await openSqlite({ path: ":memory:" });
    await memory.close();
    const errors: Error[] = [];
    const { db } = await tempDb(false, errors);
    await writeMiB(db, 1);
    await db.close();
    expect(errors).toEqual([]);
  });
});
