import { constants } from "node:fs";
import { chmod, mkdir, open } from "node:fs/promises";
import { dirname, join } from "node:path";
import { VpbkError } from "../format/errors.js";
import { pathViolation } from "../format/paths.js";
import type { VpbkArchive, VpbkSummary } from "../format/reader.js";
import type { VpbkManifest } from "../format/records.js";
import { writeAll } from "./durable.js";
import type { RestoreStep } from "./restore.js";

/** What the stream wrote into staging. */
export interface Extracted {
  summary: VpbkSummary;
  /** Every directory created, relative to staging ("" is not listed). */
  dirs: string[];
  /** Files written, including the database. */
  files: number;
}

const CREATE_FILE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/**
 * §3.2 step 4 and 5: writes the archive's records into the fresh `staging` directory.
 *
 * - DIR: `mkdir(staging/path, 0700)`, its parent a directory made earlier in this run.
 * - FILE and SQLITE_DB: `open(O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW, 0600)`, the content (its SHA-256
 *   is checked by the reader before the content iteration ends), `fdatasync`, `futimes(mtime)`.
 *
 * Every byte comes from an authenticated frame and every path passed the §2.5 rules in the reader;
 * they are checked again here before any join. The archive is complete only when this resolves:
 * the FINAL frame, trailer and content root are checked when the record loop ends.
 *
 * `checkManifest` sees the MANIFEST before any file is written; a throw refuses the archive.
 * `onStep` (tests only, see {@link RestoreStep}) is called after each chunk of content is written
 * (`content`) and after each record is in place (`record`).
 */
export async function extractInto(
  archive: VpbkArchive,
  staging: string,
  onStep?: (step: Extract<RestoreStep, "content" | "record">) => void,
  checkManifest?: (manifest: VpbkManifest) => void | Promise<void>,
): Promise<Extracted> {
  const made = new Set<string>([""]);
  const dirs: string[] = [];
  let files = 0;
  try {
    for await (const record of archive.records) {
      if (record.type === "manifest") await checkManifest?.(record.manifest);
      if (record.type === "manifest" || record.type === "end") continue;
      const target = stagedPath(staging, record.path, made, record.index);
      if (record.type === "dir") {
        await mkdir(target, { mode: 0o700 });
        await chmod(target, 0o700);
        made.add(record.path);
        dirs.push(record.path);
        onStep?.("record");
        continue;
      }
      const handle = await open(target, CREATE_FILE, 0o600);
      try {
        await handle.chmod(0o600);
        for await (const chunk of record.content) {
          await writeAll(handle, chunk);
          onStep?.("content");
        }
        await handle.datasync();
        const seconds = record.mtimeMs / 1000;
        await handle.utimes(seconds, seconds);
      } finally {
        await handle.close();
      }
      files += 1;
      onStep?.("record");
    }
  } finally {
    await archive.close();
  }
  if (archive.summary === undefined) throw new VpbkError("E_NO_FINAL", "the archive did not end with FINAL");
  return { summary: archive.summary, dirs, files };
}

/** `staging/path` after checking the path (again) and that its parent was made in this run. */
function stagedPath(staging: string, path: string, made: ReadonlySet<string>, index: number): string {
  const violation = pathViolation(Buffer.from(path, "utf8"));
  if (violation !== undefined) throw new VpbkError("E_RECORD_PATH", violation, { record: index });
  const parent = dirname(path);
  if (!made.has(parent === "." ? "" : parent)) {
    throw new VpbkError("E_RECORD_PARENT", "a parent directory was not created by this restore", {
      record: index,
      path,
    });
  }
  return join(staging, ...path.split("/"));
}
