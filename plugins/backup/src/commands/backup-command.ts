import type { CommandIO } from "@vellum/core";
import { runBackup } from "../operations/backup.js";
import { type BackupContext, fail, throughput } from "./shared.js";

/** A manual backup waits this long for a running one (the scheduler's, another process's) to finish. */
const MANUAL_LOCK_WAIT_MS = 30 * 60_000;

/**
 * `vellum backup`: one generation of the live data dir into BACKUP_TARGET (the service may keep
 * running). Prints the generation's path; with `--quiet`, nothing else.
 */
export async function backupCommand(io: CommandIO, ctx: BackupContext): Promise<number> {
  const began = performance.now();
  try {
    const { generation, removed } = await runBackup({
      dataDir: ctx.dataDir,
      databasePath: ctx.databasePath,
      options: ctx.options,
      logger: ctx.logger,
      waitForLockMs: MANUAL_LOCK_WAIT_MS,
      onProgress: (written, expected) => io.progress(written, Math.max(written, expected), "backup", "bytes"),
    });
    if (io.options.quiet === true) {
      io.print(generation.path);
      return 0;
    }
    const took = throughput(generation.bytes, performance.now() - began);
    const pruned = removed.length > 0 ? `; retention removed ${removed.length}` : "";
    io.print(`backup: ${generation.path} (${generation.entries} entries, ${took}${pruned})`);
    return 0;
  } catch (error) {
    return fail(ctx, "backup", error);
  }
}
