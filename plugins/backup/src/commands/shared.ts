import type { CommandIO, PluginOfflineContext } from "@vellum/core";
import { describeFailure } from "../failure.js";
import type { BackupOptions } from "../options.js";

export type BackupContext = PluginOfflineContext<BackupOptions>;

/** A bad invocation: printed as one line, exit 2. */
export class UsageError extends Error {}

/** A string option (`--in <file>`); a flag given without its value is a usage error. */
export function stringOption(io: CommandIO, name: string): string | undefined {
  const value = io.options[name];
  if (value === true) throw new UsageError(`--${name} needs a value`);
  return typeof value === "string" ? value : undefined;
}

/** The passphrase, or a usage error: nothing can be read or written without it. */
export function requirePassphrase(options: Readonly<BackupOptions>): string {
  if (!options.passphrase) throw new UsageError("SERVICE_BACKUP_PASSPHRASE is not set");
  return options.passphrase;
}

/** Reports a failure as one line on the log's error stream; resolves to its exit code. */
export function fail(ctx: BackupContext, command: string, error: unknown): number {
  if (error instanceof UsageError) {
    ctx.logger.error(`${command}: ${error.message}`);
    return 2;
  }
  const failure = describeFailure(error);
  ctx.logger.error(`${command} failed: ${failure.message}`);
  return failure.exitCode;
}

const MB = 1024 * 1024;

/** `12.3 MiB in 1.2 s (10.2 MiB/s)`. */
export function throughput(bytes: number, ms: number): string {
  const seconds = Math.max(ms, 1) / 1000;
  return `${(bytes / MB).toFixed(1)} MiB in ${seconds.toFixed(1)} s (${(bytes / MB / seconds).toFixed(1)} MiB/s)`;
}
