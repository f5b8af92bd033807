import { defineCommand } from "citty";
import { addressArgs, addressFlags } from "./commands/args.js";
import { configCommand } from "./commands/config.js";
import { dryRun } from "./commands/dry-run.js";
import { migrateCommand } from "./commands/migrate.js";
import { listPluginCommands } from "./commands/plugin-command.js";
import { serveCommand } from "./commands/serve.js";
import type { CliContext } from "./cli-context.js";
import { CliError, EXIT_USAGE } from "./errors.js";
import { builtinHelp } from "./help.js";

/**
 * Commands the CLI itself defines; `help` is handled before them, and any other first word is looked up among the
 * plugins' commands.
 */
const BUILTIN_COMMANDS = ["serve", "migrate", "config", "commands"] as const;

export const isBuiltinCommand = (word: string) => (BUILTIN_COMMANDS as readonly string[]).includes(word);

/** The `vellum` root command: subcommands, plus `--dry-run` (with the address flags it checks). */
export function createRootCommand(ctx: CliContext) {
  const root = defineCommand({
    meta: { name: "vellum", version: ctx.version, description: "Vellum: an embedded headless CMS" },
    args: {
      "dry-run": { type: "boolean", description: "Check the configuration and the plugin graph, then exit" },
      ...addressArgs,
    },
    subCommands: {
      serve: () => serveCommand(ctx),
      migrate: () => migrateCommand(ctx),
      config: () => configCommand(ctx),
      commands: () =>
        defineCommand({
          meta: { name: "commands", description: "List the commands the installed plugins add" },
          run: () => listPluginCommands(ctx),
        }),
    } satisfies Record<(typeof BUILTIN_COMMANDS)[number], unknown>,
    async run({ args }) {
      if (args._.length > 0) return;
      if (args["dry-run"]) return dryRun(ctx, addressFlags(args));
      throw new CliError(EXIT_USAGE, [await builtinHelp(ctx, [root])]);
    },
  });
  return root;
}
