import {
  type AnyVellumPlugin,
  type CommandIO,
  createVellum,
  type DeclaredCommand,
  declaredCommands,
  matchCommand,
  offlineCommand,
  offlineContext,
  resolvePlugins,
} from "@vellum/core";
import { loadConfigFile } from "../config-file.js";
import { createProgressBar } from "../progress.js";
import type { CliContext } from "../cli-context.js";
import type { AddressFlags } from "../env.js";
import { CliError, type ConfigProblem } from "../errors.js";
import { loadSettings, type Settings, toVellumConfig } from "../settings.js";

export interface ParsedCommandLine {
  words: string[];
  options: Record<string, string | boolean>;
  flags: AddressFlags;
}

/** Splits `sync run --batch 500 --dry extra` into command words, options and positionals. */
export function parseCommandLine(argv: readonly string[]): ParsedCommandLine {
  const words: string[] = [];
  const options: Record<string, string | boolean> = {};
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i] ?? "";
    if (!token.startsWith("--")) {
      words.push(token);
      continue;
    }
    const [name = "", inline] = token.slice(2).split(/=(.*)/s, 2);
    const next = argv[i + 1];
    if (inline !== undefined) options[name] = inline;
    else if (next !== undefined && !next.startsWith("--")) {
      options[name] = next;
      i++;
    } else options[name] = true;
  }
  const dataDir = typeof options["data-dir"] === "string" ? options["data-dir"] : undefined;
  delete options["data-dir"];
  return { words, options, flags: { dataDir } };
}

function createIO(
  ctx: CliContext,
  options: CommandIO["options"],
  positionals: string[],
): { io: CommandIO; done(): void } {
  const interactive = Boolean(process.stderr.isTTY);
  const bar = interactive ? createProgressBar(process.stderr) : undefined;
  const io: CommandIO = {
    options,
    positionals,
    interactive,
    print: ctx.print,
    progress: (done, total, label, unit) => bar?.update(done, total, label, unit),
  };
  return { io, done: () => bar?.stop() };
}

/** The plugin commands of this configuration (declared statically: nothing starts). */
async function declared(
  ctx: CliContext,
  flags: AddressFlags,
): Promise<{ settings: Settings; commands: DeclaredCommand[] }> {
  const settings = await loadSettings(ctx, flags);
  return { settings, commands: declaredCommands(resolvePlugins(settings.plugins)) };
}

/**
 * The commands of the installed plugins (the host's defaults, then the config file's), for help and
 * `vellum commands`: only the config file is read, so a bad setting does not hide them. `problems` are the
 * config file's, when it could not be loaded (its plugins' commands are then missing).
 */
export async function installedCommands(
  ctx: CliContext,
): Promise<{ commands: DeclaredCommand[]; problems: ConfigProblem[] }> {
  const file = await loadConfigFile(ctx.cwd);
  const plugins = [...ctx.defaultPlugins(), ...(file.config.plugins ?? [])].filter(
    (plugin): plugin is AnyVellumPlugin => Boolean(plugin),
  );
  return { commands: declaredCommands(plugins), problems: file.problems };
}

/**
 * Runs a command a plugin added (`vellum sync run`): the name is checked against the plugins'
 * declarations first, so an unknown command touches no data; then init and migrations (no
 * workers, no scheduler) and the plugin's handler. An offline command (declared with `run`) runs
 * without either: nothing opens the data dir.
 */
export async function runPluginCommand(ctx: CliContext, argv: readonly string[]): Promise<number> {
  const line = parseCommandLine(argv);
  const { settings, commands } = await declared(ctx, line.flags);
  const found = matchCommand(commands, line.words);
  if (!found) throw CliError.usage(`unknown command '${line.words[0] ?? ""}'`);
  const { io, done } = createIO(ctx, line.options, line.words.slice(found.consumed));
  const config = { ...toVellumConfig(settings, ctx), accessLog: false };
  const offline = offlineCommand(settings.plugins, found.command.name);
  try {
    if (offline) return (await offline.run(io, offlineContext(offline.plugin, config, ctx.logger))) ?? 0;
    const vellum = createVellum(config);
    try {
      const outcome = await vellum.migrate();
      if (outcome.error) throw outcome.error;
      return await vellum.runCommand(found.command.name, io);
    } finally {
      await vellum.close();
    }
  } finally {
    done();
  }
}

/** `vellum commands`: the commands the installed plugins add. */
export async function listPluginCommands(ctx: CliContext): Promise<void> {
  const { commands, problems } = await installedCommands(ctx);
  if (problems.length > 0) throw CliError.configuration(problems);
  if (commands.length === 0) ctx.print("vellum: the installed plugins add no commands");
  for (const command of commands) ctx.print(`vellum ${command.name}  ${command.description} (${command.plugin})`);
}
