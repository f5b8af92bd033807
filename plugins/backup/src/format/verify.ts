import { openVpbk, type OpenVpbkOptions, type VpbkSummary } from "./reader.js";
import type { VpbkSource } from "./source.js";

/**
 * `restore -in <file> -verify` without the CLI: §2.7 checks 1–8, writing nothing. It unlocks the
 * header (KDF bounds first), authenticates every frame and the chain, decodes every record with
 * the path and order rules, checks every SHA-256, the FINAL frame, the trailer and that nothing
 * follows. Resolves with the summary (id, created, frames, bytes, entries, content root), or
 * rejects with the {@link VpbkError} of the first check that failed (`exitCode` gives the exit
 * status). Memory stays at about one frame whatever the archive's size. With
 * `trustContentDigests` (the writer's read-after-write check, data key only) the per-record SHA-256
 * of file content is not recomputed; everything else is checked, the content root included.
 */
export async function verifyVpbk(source: VpbkSource, options: OpenVpbkOptions): Promise<VpbkSummary> {
  const archive = await openVpbk(source, options);
  try {
    for await (const record of archive.records) {
      if (record.type === "file" || record.type === "sqlite-db") {
        for await (const _chunk of record.content) {
          // Reading the content is what checks it.
        }
      }
    }
  } finally {
    await archive.close();
  }
  return archive.summary as VpbkSummary;
}
