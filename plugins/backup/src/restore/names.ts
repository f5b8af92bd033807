import { basename, dirname, join } from "node:path";

/** `YYYYMMDD-HHMMSS` in UTC, as §3.2 names staging and replaced directories. */
export function utcStamp(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number, width = 2) => String(n).padStart(width, "0");
  return (
    `${pad(d.getUTCFullYear(), 4)}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}-` +
    `${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}${pad(d.getUTCSeconds())}`
  );
}

/** The names a restore into `dest` uses beside it, in its parent directory (§3.2 steps 2, 7, 8). */
export interface RestoreNames {
  /** `dest`, absolute. */
  dest: string;
  parent: string;
  base: string;
  /** The prefix every staging directory's name starts with: `.<basename>.restore-`. */
  stagingPrefix: string;
  /** `<parent>/.<basename>.restore-journal.json`. */
  journal: string;
  /** The prefix of the journal's temporary files. */
  journalTempPrefix: string;
}

/** The names around an absolute, normalised `dest`. */
export function restoreNames(dest: string): RestoreNames {
  const parent = dirname(dest);
  const base = basename(dest);
  const journalName = `.${base}.restore-journal.json`;
  return {
    dest,
    parent,
    base,
    stagingPrefix: `.${base}.restore-`,
    journal: join(parent, journalName),
    journalTempPrefix: `${journalName}.tmp-`,
  };
}

/** The mkdtemp prefix of a staging directory made at `nowMs`. */
export function stagingTemplate(names: RestoreNames, nowMs: number): string {
  return join(names.parent, `${names.stagingPrefix}${utcStamp(nowMs)}-`);
}

/** `<dest>.replaced-<UTC YYYYMMDD-HHMMSS>`, then `-1`, `-2`, … (attempt 0 is the plain name). */
export function replacedCandidate(dest: string, nowMs: number, attempt: number): string {
  const name = `${dest}.replaced-${utcStamp(nowMs)}`;
  return attempt === 0 ? name : `${name}-${attempt}`;
}
