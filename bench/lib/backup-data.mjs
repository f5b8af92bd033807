import { randomFillSync } from "node:crypto";
import { constants } from "node:fs";
import { mkdir, open, readdir, stat } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";

const MIB = 1024 * 1024;
/** Share of the data dir that is the SQLite database (128 MiB of 1 GiB). */
const DB_SHARE = 1 / 8;
/** Mean size of a large media file (200 of them make the other 896 MiB of 1 GiB). */
const MEDIA_MEAN_BYTES = 4.48 * MIB;
/** Small files (thumbnails): under the library's 1 MiB "read whole into memory" size. */
const SMALL_FILES = 40;
const SMALL_MAX_BYTES = 256 * 1024;
/** Bytes of random blob per database row. */
const ROW_BLOB_BYTES = 4000;

/**
 * better-sqlite3 as the backup plugin resolves it (the repo's node_modules), so the bench needs no
 * dependency of its own.
 */
function loadSqlite() {
  const require = createRequire(new URL("../../plugins/backup/package.json", import.meta.url));
  return require("better-sqlite3");
}

/** A small deterministic generator (mulberry32): the same sizes every run. */
function seeded(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Writes `bytes` random (incompressible) bytes to a new file and fsyncs it. */
async function writeRandomFile(path, bytes, buffer) {
  const handle = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
  try {
    let left = bytes;
    while (left > 0) {
      const n = Math.min(left, buffer.length);
      randomFillSync(buffer, 0, n);
      let written = 0;
      while (written < n) written += (await handle.write(buffer, written, n - written)).bytesWritten;
      left -= n;
    }
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * A real SQLite database in WAL mode: `rows` rows of a 4000-byte random blob and a short text,
 * inserted in transactions of 1000, then checkpointed; about `bytes` in all.
 */
function writeDatabase(path, bytes) {
  const Database = loadSqlite();
  const db = new Database(path);
  try {
    db.pragma("journal_mode = WAL");
    db.exec("CREATE TABLE items (id INTEGER PRIMARY KEY, title TEXT NOT NULL, body BLOB NOT NULL)");
    db.pragma("user_version = 7");
    const insert = db.prepare("INSERT INTO items (title, body) VALUES (?, ?)");
    const rows = Math.max(1, Math.round(bytes / (ROW_BLOB_BYTES + 96)));
    const blob = Buffer.alloc(ROW_BLOB_BYTES);
    const batch = db.transaction((from, to) => {
      for (let i = from; i < to; i++) insert.run(`item ${i}`, randomFillSync(blob));
    });
    for (let i = 0; i < rows; i += 1000) batch(i, Math.min(rows, i + 1000));
    db.pragma("wal_checkpoint(TRUNCATE)");
    return rows;
  } finally {
    db.close();
  }
}

/**
 * Fills `dir` (which must exist and be empty) with a Vellum data dir of about `totalBytes`:
 * `db/vellum.sqlite` (1/8, WAL mode, random blobs) and incompressible media under `media/` (large
 * files of a mean 4.48 MiB in a few year/month folders, plus 40 small ones under 256 KiB). Every
 * file is fsynced, so no writeback of the set-up competes with the measurements.
 * @param {string} dir
 * @param {number} totalBytes
 */
export async function createDataDir(dir, totalBytes) {
  const dbBytes = Math.round(totalBytes * DB_SHARE);
  await mkdir(join(dir, "db"), { recursive: true });
  const rows = writeDatabase(join(dir, "db", "vellum.sqlite"), dbBytes);
  const dbFileBytes = (await stat(join(dir, "db", "vellum.sqlite"))).size;

  const random = seeded(15);
  const buffer = Buffer.alloc(MIB);
  let mediaBytes = Math.max(0, totalBytes - dbFileBytes);
  const smallCount = mediaBytes > SMALL_FILES * SMALL_MAX_BYTES * 4 ? SMALL_FILES : 0;
  const plan = [];
  for (let i = 0; i < smallCount; i++) {
    const size = 4096 + Math.floor(random() * (SMALL_MAX_BYTES - 4096));
    plan.push({ path: join("media", "thumbs", `t${String(i).padStart(3, "0")}.webp`), size });
    mediaBytes -= size;
  }
  const largeCount = Math.max(1, Math.round(mediaBytes / MEDIA_MEAN_BYTES));
  const weights = Array.from({ length: largeCount }, () => 0.25 + 1.5 * random());
  const weightSum = weights.reduce((s, w) => s + w, 0);
  let left = mediaBytes;
  weights.forEach((w, i) => {
    const size = i === largeCount - 1 ? left : Math.floor((mediaBytes * w) / weightSum);
    left -= size;
    const folder = join("media", `20${20 + (i % 5)}`, String((i % 12) + 1).padStart(2, "0"));
    plan.push({ path: join(folder, `m${String(i).padStart(4, "0")}.bin`), size });
  });
  for (const { path } of plan) await mkdir(join(dir, path, ".."), { recursive: true });
  for (const { path, size } of plan) await writeRandomFile(join(dir, path), size, buffer);
  const dirHandle = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  await dirHandle.sync();
  await dirHandle.close();

  const files = [join(dir, "db", "vellum.sqlite"), ...plan.map((p) => join(dir, p.path))];
  const sizes = [dbFileBytes, ...plan.map((p) => p.size)];
  const bytes = sizes.reduce((s, n) => s + n, 0);
  return { files, sizes, bytes, dbBytes: dbFileBytes, rows, mediaFiles: plan.length, smallFiles: smallCount };
}

/** Sum of the sizes of the regular files under `dir`, and their count (the restore's sanity check). */
export async function treeBytes(dir) {
  let bytes = 0;
  let files = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    bytes += (await stat(join(entry.parentPath ?? entry.path, entry.name))).size;
    files++;
  }
  return { bytes, files };
}
