import Database from "better-sqlite3";
import { openVpbk, type OpenVpbkOptions, type VpbkSummary } from "../format/index.js";
import { RestoreError } from "../restore/index.js";

/**
 * `restore -in <file> -verify -deep` (backup-format.md §2.7 check 10): every check of a verify,
 * then the SQLITE_DB image opened in memory (bytes 18–19 patched from WAL to rollback, so no
 * `-wal` file is looked for), `PRAGMA integrity_check` == `ok` and an empty `foreign_key_check`;
 * `E_DB_INTEGRITY` (exit 1) otherwise. It holds the database image in memory: its size on top of
 * a verify's.
 */
export async function verifyDeep(file: string, options: OpenVpbkOptions): Promise<VpbkSummary> {
  const archive = await openVpbk(file, options);
  const image: Buffer[] = [];
  try {
    for await (const record of archive.records) {
      if (record.type !== "file" && record.type !== "sqlite-db") continue;
      for await (const chunk of record.content) if (record.type === "sqlite-db") image.push(chunk);
    }
  } finally {
    await archive.close();
  }
  checkImage(Buffer.concat(image));
  return archive.summary as VpbkSummary;
}

function checkImage(image: Buffer): void {
  if (image.length >= 20) {
    image[18] = 1;
    image[19] = 1;
  }
  let db: Database.Database;
  try {
    db = new Database(image);
  } catch (cause) {
    throw new RestoreError("E_DB_INTEGRITY", `the database image does not open: ${String(cause)}`, { cause });
  }
  try {
    const integrity = pragma(db, "integrity_check").map((row) => Object.values(row as object).join(" "));
    if (integrity.length !== 1 || integrity[0] !== "ok") {
      throw new RestoreError("E_DB_INTEGRITY", `PRAGMA integrity_check: ${integrity.slice(0, 5).join("; ")}`);
    }
    const foreign = pragma(db, "foreign_key_check");
    if (foreign.length > 0) {
      throw new RestoreError(
        "E_DB_INTEGRITY",
        `PRAGMA foreign_key_check: ${foreign.length} row(s) break a foreign key`,
      );
    }
  } finally {
    db.close();
  }
}

/** A pragma's rows; a database too damaged to answer is `E_DB_INTEGRITY` too. */
function pragma(db: Database.Database, name: string): unknown[] {
  try {
    return db.pragma(name) as unknown[];
  } catch (cause) {
    throw new RestoreError(
      "E_DB_INTEGRITY",
      `PRAGMA ${name}: ${cause instanceof Error ? cause.message : String(cause)}`,
      {
        cause,
      },
    );
  }
}
