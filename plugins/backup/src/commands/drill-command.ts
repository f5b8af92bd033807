import type { CommandIO } from "@vellum/core";
import { runDrill } from "../operations/drill.js";
import { type BackupContext, fail } from "./shared.js";

/**
 * `vellum drill`: restores the newest generation into a scratch dir beside the data dir and checks
 * it (the scheduled drill, on demand). Exit 0 when it passed, 1 when it failed (the reason is
 * logged as `restore drill failure: …` and kept as the last result), 5 with BACKUP_OFF=true.
 */
export async function drillCommand(io: CommandIO, ctx: BackupContext): Promise<number> {
  try {
    if (ctx.options.off) {
      ctx.logger.error("drill: backups disabled (BACKUP_OFF=true): no drills run");
      return 5;
    }
    const result = await runDrill({ dataDir: ctx.dataDir, options: ctx.options, logger: ctx.logger });
    if (!result.ok) return 1;
    io.print(`drill: generation ${result.generation} restored and checked in ${result.durationMs} ms`);
    return 0;
  } catch (error) {
    return fail(ctx, "drill", error);
  }
}
