import { readFileSync } from "node:fs";
import type { VpbkManifest } from "./format/index.js";
import { RestoreError } from "./restore/index.js";

/** This package's version: the MANIFEST's `app.version` of the generations it writes. */
export const PACKAGE_VERSION = (
  JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }
).version;

/** `1.2.3` (a pre-release suffix ignored) as numbers, or undefined for anything else. */
function parts(version: string): number[] | undefined {
  const match = /^(\d+)\.(\d+)\.(\d+)/.exec(version);
  return match ? match.slice(1, 4).map(Number) : undefined;
}

/**
 * Refuses (`E_DB_VERSION`, exit 5) a generation whose MANIFEST says a newer version wrote it: its
 * database may hold migrations this one does not know (backup-format.md §3.2 step 6, §5 test 37).
 */
export function refuseNewerApp(manifest: VpbkManifest): void {
  const app = manifest.app as { name?: unknown; version?: unknown } | undefined;
  const theirs = typeof app?.version === "string" ? parts(app.version) : undefined;
  const ours = parts(PACKAGE_VERSION);
  if (!theirs || !ours) return;
  const newer = theirs.findIndex((n, i) => n !== ours[i]);
  if (newer >= 0 && (theirs[newer] as number) > (ours[newer] as number)) {
    throw new RestoreError(
      "E_DB_VERSION",
      `the generation was written by version ${String(app?.version)}, newer than this one (${PACKAGE_VERSION}); restore it with that version or a later one`,
    );
  }
}
