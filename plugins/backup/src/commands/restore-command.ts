import { basename } from "node:path";
import type { CommandIO } from "@vellum/core";
import { verifyVpbk, type VpbkSummary } from "../format/index.js";
import { nameMatchesCreated, parseAtTime, selectAt } from "../policy/index.js";
import { nameSecond } from "../generation/index.js";
import { restoreGeneration } from "../restore/index.js";
import { type BackupContext, fail, requirePassphrase, stringOption, throughput, UsageError } from "./shared.js";
import { refuseNewerApp } from "../version.js";
import { verifyDeep } from "../operations/deep-verify.js";

/**
 * `vellum restore`, in its three forms (seed and backup-format.md §2.7, §3.2, §4):
 * - `-in <file> -verify [-deep]`: every check of §2.7, writing nothing (`-deep` also opens the database
 *   image in memory: check 10); exit 0 only when all hold;
 * - `-in <file> -dest <dir>`: the §3.2 restore, the previous dir kept as `<dir>.replaced-<stamp>`;
 * - `--at <RFC 3339 time> -dest <dir> [-in <dir>]`: the newest generation sealed at or before
 *   that time, from `-in` or BACKUP_TARGET, verified in full before it is restored.
 */
export async function restoreCommand(io: CommandIO, ctx: BackupContext): Promise<number> {
  try {
    const input = stringOption(io, "in");
    const dest = stringOption(io, "dest");
    const at = stringOption(io, "at");
    if (io.options.verify === true) {
      if (!input || dest || at) throw new UsageError("use -in <file> -verify [-deep] (without -dest or --at)");
      return await verify(io, ctx, input);
    }
    if (!dest) throw new UsageError("say where to restore: -dest <dir> (or -in <file> -verify to check a file)");
    if (at !== undefined) return await restoreAt(io, ctx, at, dest, input);
    if (!input) throw new UsageError("say what to restore: -in <file>, or --at <time>");
    return await restoreFile(io, ctx, input, dest);
  } catch (error) {
    return fail(ctx, "restore", error);
  }
}

async function verify(io: CommandIO, ctx: BackupContext, file: string): Promise<number> {
  const began = performance.now();
  const unlock = {
    passphrase: requirePassphrase(ctx.options),
    previousPassphrase: ctx.options.previousPassphrase,
    onProgress: (done: number, total: number | undefined) => io.progress(done, total, "verify", "bytes"),
  };
  const summary = io.options.deep === true ? await verifyDeep(file, unlock) : await verifyVpbk(file, unlock);
  const name = basename(file);
  if (nameSecond(name) !== undefined && !nameMatchesCreated(name, summary.createdMs)) {
    ctx.logger.warn(`W_NAME_TIME: the name ${name} disagrees with the generation's created time`);
  }
  const line = describe(summary);
  io.print(
    io.options.quiet === true
      ? line
      : `verified ${file}: ${line}; ${throughput(summary.archiveBytes, performance.now() - began)}`,
  );
  return 0;
}

async function restoreFile(io: CommandIO, ctx: BackupContext, file: string, dest: string): Promise<number> {
  await restoreGeneration({
    file,
    dest,
    passphrase: requirePassphrase(ctx.options),
    previousPassphrase: ctx.options.previousPassphrase,
    onProgress: (done, total) => io.progress(done, total, "restore", "bytes"),
    checkManifest: refuseNewerApp,
    log: (line) => {
      if (io.options.quiet !== true || !line.startsWith("generation ")) io.print(line);
    },
  });
  return 0;
}

async function restoreAt(
  io: CommandIO,
  ctx: BackupContext,
  atText: string,
  dest: string,
  dir: string | undefined,
): Promise<number> {
  const atMs = parseAtTime(atText);
  const source = dir ?? ctx.options.target;
  if (!source) throw new UsageError("--at needs -in <dir of generations> or BACKUP_TARGET");
  const passphrase = requirePassphrase(ctx.options);
  const unlock = { passphrase, previousPassphrase: ctx.options.previousPassphrase };
  const chosen = await selectAt(source, atMs, {
    unlock,
    verify: async (path) => void (await verifyVpbk(path, unlock)),
    warn: (line) => ctx.logger.warn(line),
  });
  if (io.options.quiet !== true) {
    const sealed = new Date(chosen.sealedMs).toISOString();
    io.print(`restore --at ${new Date(atMs).toISOString()}: ${chosen.generation.name} (sealed ${sealed})`);
  }
  return restoreFile(io, ctx, chosen.generation.path, dest);
}

/** §2.7's success line: id, created, frames, bytes, entries, content root. */
function describe(summary: VpbkSummary): string {
  return [
    `generation ${summary.generationId}`,
    `created ${new Date(summary.createdMs).toISOString()}`,
    `${summary.dataFrames + 1} frames`,
    `${summary.archiveBytes} bytes`,
    `${summary.entries} entries`,
    `content root ${summary.contentRoot}`,
  ].join(", ");
}
