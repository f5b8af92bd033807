// The live SQLite snapshot (backup-format.md §3.1 step 1), run in a worker_thread so the main loop
// stays free while SQLite copies the pages. Plain JavaScript, shipped as is in `src/snapshot/` and
// resolved from `sqlite.ts` (or its compiled `dist` copy) by URL: Node 20 cannot run TypeScript in
// a worker, and tsc does not copy `.mjs` files to `dist`.
//
// workerData: { dbPath, maxBytes, gate?: SharedArrayBuffer (tests: wait after the pin) }
// Posts one message: { ok: true, image: ArrayBuffer (transferred), t0Ms, pageSize, pageCount,
// sqliteVersion, userVersion, tableCounts } or { ok: false, code, message }.
import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";

const { dbPath, maxBytes, gate } = workerData;

function run() {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    db.exec("BEGIN");
    try {
      // One read pins the WAL read snapshot; everything below sees the database as of this moment.
      db.prepare("SELECT count(*) FROM sqlite_schema").pluck().get();
      // T0 only now: the label is never earlier than the state it names.
      const t0Ms = Date.now();
      if (gate !== undefined) {
        const flag = new Int32Array(gate);
        parentPort.postMessage({ pinned: true, t0Ms });
        Atomics.wait(flag, 0, 0);
      }
      const pageSize = db.pragma("page_size", { simple: true });
      const pageCount = db.pragma("page_count", { simple: true });
      const userVersion = db.pragma("user_version", { simple: true });
      const sqliteVersion = db.prepare("SELECT sqlite_version()").pluck().get();
      const size = pageSize * pageCount;
      if (size > maxBytes) {
        return {
          ok: false,
          code: "E_DB_TOO_LARGE",
          message:
            `the database is ${size} bytes (${pageCount} pages of ${pageSize}), above the in-memory ` +
            `snapshot cap of ${maxBytes} bytes; no generation was written (there is no plaintext fallback)`,
        };
      }
      // Rows per table in the same read snapshot: what a restore drill compares the restored copy with.
      const tableCounts = {};
      const tables = db
        .prepare(
          "SELECT name FROM sqlite_schema WHERE type = 'table' AND substr(name, 1, 7) <> 'sqlite_' ORDER BY name",
        )
        .pluck()
        .all();
      for (const table of tables) {
        tableCounts[table] = db
          .prepare(`SELECT count(*) FROM "${table.replaceAll('"', '""')}"`)
          .pluck()
          .get();
      }
      const image = db.serialize();
      db.exec("COMMIT");
      // serialize() gives a Buffer over its own external memory: hand that memory over, no copy.
      const whole = image.byteOffset === 0 && image.byteLength === image.buffer.byteLength;
      const buffer = whole ? image.buffer : image.buffer.slice(image.byteOffset, image.byteOffset + image.byteLength);
      return { ok: true, image: buffer, t0Ms, pageSize, pageCount, sqliteVersion, userVersion, tableCounts };
    } finally {
      if (db.inTransaction) db.exec("ROLLBACK");
    }
  } finally {
    db.close();
  }
}

let result;
try {
  result = run();
} catch (error) {
  result = { ok: false, code: "E_SNAPSHOT", message: error instanceof Error ? error.message : String(error) };
}
parentPort.postMessage(result, result.ok ? [result.image] : []);
