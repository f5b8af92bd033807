import { VpbkError } from "./format/index.js";
import { RestoreError } from "./restore/index.js";
import { BackupError } from "./snapshot/index.js";

/** A failed backup, verify, restore or drill as the CLI, the logs and health report it. */
export interface Failure {
  /** The format's, the writer's or the restore's error code (`E_FRAME_AUTH`, `E_TARGET`, …). */
  code: string;
  /** 1 integrity, 2 usage or configuration, 3 unlock, 4 I/O or no space, 5 precondition. */
  exitCode: number;
  /** One line: the code, what failed and where. */
  message: string;
}

/**
 * One reading of the three error kinds (the archive's {@link VpbkError}, the writer's
 * {@link BackupError}, the restore's {@link RestoreError}); anything else is an I/O failure.
 */
export function describeFailure(error: unknown): Failure {
  if (error instanceof VpbkError) return { code: error.code, exitCode: error.exitCode, message: error.describe() };
  if (error instanceof BackupError || error instanceof RestoreError) {
    return { code: error.code, exitCode: error.exitCode, message: `${error.code}: ${error.message}` };
  }
  const errno = (error as NodeJS.ErrnoException | undefined)?.code;
  const text = error instanceof Error ? error.message : String(error);
  const noSpace = errno === "ENOSPC" || errno === "EDQUOT";
  return { code: noSpace ? "E_NO_SPACE" : "E_IO", exitCode: 4, message: `${noSpace ? "E_NO_SPACE" : "E_IO"}: ${text}` };
}
