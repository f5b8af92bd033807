// The live SQLite snapshot (backup-format.md §3.1 step 1), run in a worker_thread so the main loop
// stays free while SQLite copies the pages. Plain JavaScript, shipped as is in `src/snapshot/` and
// resolved from `sqlite.ts` (or its compiled `dist` copy) by URL: Node 20 cannot run TypeScript in
// a worker, and tsc does not copy `.mjs` files to `dist`.
//
// workerData: { dbPath, maxBytes, sliceBytes, gate?: SharedArrayBuffer (tests: wait after the pin) }
// Posts { ok: true, bytes, t0Ms, pageSize, pageCount, sqliteVersion, userVersion, tableCounts } or
// { ok: false, code, message }. Then, for each { next: true } it receives, one { slice: ArrayBuffer }
// (transferred) of the image, and { done: true } after the last. The image stays here: the memory
// `serialize()` returns cannot be transferred, and handing it over whole would copy it; slices on
// request keep one image plus one slice in memory, whatever the database's size.
import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";

const { dbPath, maxBytes, sliceBytes, gate } = workerData;

function snapshot() {
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
          meta: {
            ok: false,
            code: "E_DB_TOO_LARGE",
            message:
              `the database is ${size} bytes (${pageCount} pages of ${pageSize}), above the in-memory ` +
              `snapshot cap of ${maxBytes} bytes; no generation was written (there is no plaintext fallback)`,
          },
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
      const meta = {
        ok: true,
        bytes: image.length,
        t0Ms,
        pageSize,
        pageCount,
        sqliteVersion,
        userVersion,
        tableCounts,
      };
      return { meta, image };
    } finally {
      if (db.inTransaction) db.exec("ROLLBACK");
    }
  } finally {
    db.close();
  }
}

let taken;
try {
  taken = snapshot();
} catch (error) {
  taken = { meta: { ok: false, code: "E_SNAPSHOT", message: error instanceof Error ? error.message : String(error) } };
}
parentPort.postMessage(taken.meta);
if (taken.image !== undefined) {
  const image = taken.image;
  let at = 0;
  parentPort.on("message", (message) => {
    if (!message?.next) return;
    if (at >= image.length) {
      parentPort.postMessage({ done: true });
      parentPort.close();
      return;
    }
    const end = Math.min(at + sliceBytes, image.length);
    const slice = new Uint8Array(end - at);
    slice.set(image.subarray(at, end));
    at = end;
    parentPort.postMessage({ slice: slice.buffer }, [slice.buffer]);
  });
} else {
  parentPort.close();
}
