import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BackupError, type DbSnapshot, snapshotDatabase, walkDataDir } from "../src/snapshot/index.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "vellum-snapshot-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const ACCOUNTS = 200;
const TOTAL = ACCOUNTS * 1000;

/** A WAL database with a sum invariant: transfers move money between accounts, the total stays. */
function bank(path: string): Database.Database {
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.exec("CREATE TABLE account (id INTEGER PRIMARY KEY, balance INTEGER NOT NULL, blob BLOB)");
  db.exec("CREATE TABLE marker (note TEXT)");
  const insert = db.prepare("INSERT INTO account (id, balance, blob) VALUES (?, 1000, randomblob(512))");
  db.transaction(() => {
    for (let id = 0; id < ACCOUNTS; id += 1) insert.run(id);
  })();
  db.pragma("user_version = 7");
  return db;
}

/**
 * Reads a snapshot's slices (each at most 1 MiB, together its bytes), ends its worker, and opens the
 * image in memory: a WAL database's header says WAL (bytes 18–19 = 2), patched to 1 (§2.7 check 10).
 */
async function openImage(snapshot: DbSnapshot): Promise<Database.Database> {
  const slices: Buffer[] = [];
  for await (const slice of snapshot.content) slices.push(slice);
  await snapshot.close();
  expect(Math.max(...slices.map((slice) => slice.length))).toBeLessThanOrEqual(1024 * 1024);
  expect(slices.length).toBe(Math.ceil(snapshot.bytes / (1024 * 1024)));
  const copy = Buffer.concat(slices);
  expect(copy.length).toBe(snapshot.bytes);
  copy[18] = 1;
  copy[19] = 1;
  return new Database(copy);
}

describe("snapshotDatabase", () => {
  it("is consistent while another connection keeps committing", async () => {
    const path = join(dir, "vellum.sqlite");
    const db = bank(path);
    const debit = db.prepare("UPDATE account SET balance = balance - ?, blob = randomblob(512) WHERE id = ?");
    const credit = db.prepare("UPDATE account SET balance = balance + ? WHERE id = ?");
    const transfer = db.transaction((from: number, to: number, amount: number) => {
      debit.run(amount, from);
      credit.run(amount, to);
    });
    let commits = 0;
    let running = true;
    const load = (async () => {
      while (running) {
        for (let i = 0; i < 50; i += 1) {
          transfer(Math.floor(Math.random() * ACCOUNTS), Math.floor(Math.random() * ACCOUNTS), 1 + (i % 7));
          commits += 1;
        }
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    try {
      for (let round = 0; round < 3; round += 1) {
        const before = commits;
        const snapshot = await snapshotDatabase({ dbPath: path });
        expect(commits).toBeGreaterThan(before); // the writer went on during the snapshot
        const image = await openImage(snapshot);
        expect(image.pragma("integrity_check", { simple: true })).toBe("ok");
        expect(image.prepare("SELECT sum(balance) FROM account").pluck().get()).toBe(TOTAL);
        expect(image.prepare("SELECT count(*) FROM account").pluck().get()).toBe(ACCOUNTS);
        image.close();
        expect(snapshot.userVersion).toBe(7);
        expect(snapshot.pageSize * snapshot.pageCount).toBe(snapshot.bytes);
        expect(snapshot.sqliteVersion).toMatch(/^3\.\d+\.\d+/);
      }
    } finally {
      running = false;
      await load;
      db.close();
    }
  });

  it("pins the read snapshot before T0: a row committed after the pin is absent", async () => {
    const path = join(dir, "vellum.sqlite");
    const db = bank(path);
    let pinnedAt = 0;
    const snapshot = await snapshotDatabase({
      dbPath: path,
      onPinned: () => {
        pinnedAt = Date.now();
        db.prepare("INSERT INTO marker (note) VALUES ('after the pin')").run();
      },
    });
    expect(snapshot.t0Ms).toBeLessThanOrEqual(pinnedAt);
    const image = await openImage(snapshot);
    expect(image.prepare("SELECT count(*) FROM marker").pluck().get()).toBe(0);
    image.close();
    const later = await snapshotDatabase({ dbPath: path });
    const image2 = await openImage(later);
    expect(image2.prepare("SELECT note FROM marker").pluck().get()).toBe("after the pin");
    image2.close();
    db.close();
  });

  it("hands a larger image over in 1 MiB slices that add up to the same database", async () => {
    const path = join(dir, "vellum.sqlite");
    const db = bank(path);
    db.prepare("INSERT INTO marker (note) SELECT hex(randomblob(3000)) FROM account").run();
    db.prepare("INSERT INTO marker (note) SELECT note FROM marker").run();
    const snapshot = await snapshotDatabase({ dbPath: path });
    expect(snapshot.bytes).toBeGreaterThan(2 * 1024 * 1024);
    const image = await openImage(snapshot);
    expect(image.pragma("integrity_check", { simple: true })).toBe("ok");
    expect(image.prepare("SELECT count(*) FROM marker").pluck().get()).toBe(2 * ACCOUNTS);
    expect(snapshot.tableCounts).toEqual({ account: ACCOUNTS, marker: 2 * ACCOUNTS });
    image.close();
    db.close();
  });

  it("refuses a database above the cap before serializing (E_DB_TOO_LARGE)", async () => {
    const path = join(dir, "vellum.sqlite");
    bank(path).close();
    const error = await snapshotDatabase({ dbPath: path, maxBytes: 4096 }).catch((e: unknown) => e);
    expect(BackupError.is(error, "E_DB_TOO_LARGE")).toBe(true);
    expect((error as BackupError).message).toMatch(/above the in-memory snapshot cap of 4096 bytes/);
    expect((error as BackupError).exitCode).toBe(5);
  });

  it("never creates a database (E_SNAPSHOT)", async () => {
    const error = await snapshotDatabase({ dbPath: join(dir, "missing.sqlite") }).catch((e: unknown) => e);
    expect(BackupError.is(error, "E_SNAPSHOT")).toBe(true);
  });
});

describe("walkDataDir", () => {
  it("lists the walked folders in byte order of full paths and skips links and special files", async () => {
    await mkdir(join(dir, "media", "a"), { recursive: true });
    await writeFile(join(dir, "media", "a", "b"), "1");
    await writeFile(join(dir, "media", "a-b"), "2");
    await writeFile(join(dir, "media", "Z"), "3");
    await symlink("/etc/passwd", join(dir, "media", "link"));
    await mkdir(join(dir, "settings"));
    await writeFile(join(dir, "settings", "x:y"), "colon");
    await writeFile(join(dir, "other"), "not walked");
    await symlink(join(dir, "media"), join(dir, "pgp"));
    const { entries, skipped } = await walkDataDir(dir);
    expect(entries.map((e) => `${e.kind} ${e.path}`)).toEqual([
      "dir media",
      "file media/Z",
      "dir media/a",
      "file media/a-b",
      "file media/a/b",
      "dir settings",
    ]);
    expect(skipped).toEqual([
      { path: "media/link", reason: "symlink" },
      { path: "pgp", reason: "symlink" },
      { path: "settings/x:y", reason: "unrepresentable path: a path has no colon" },
    ]);
  });
});
