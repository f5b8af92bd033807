import { defineCommand, renderUsage } from "citty";
import { addressArgs, addressFlags } from "./commands/args.js";
import { configCommand } from "./commands/config.js";
import { dryRun } from "./commands/dry-run.js";
import { migrateCommand } from "./commands/migrate.js";
import { serveCommand } from "./commands/serve.js";
import type { CliContext } from "./cli-context.js";
import { CliError, EXIT_USAGE } from "./errors.js";

/** Commands the CLI itself defines; any other first word is looked up among the plugins' commands. */
export const BUILTIN_COMMANDS = { serve: true, migrate: true, config: true } as const;

/** The `vellum` root command: subcommands, plus `--dry-run` (with the address flags it checks). */
export function createRootCommand(ctx: CliContext) {
  const root = defineCommand({
    meta: {
      name: "vellum",
      version: ctx.version,
      description: "Vellum: an embedded headless CMS. Plugins add more commands: 'vellum commands' lists them.",
    },
    args: {
      "dry-run": { type: "boolean", description: "Check the configuration and the plugin graph, then exit" },
      ...addressArgs,
    },
    subCommands: {
      serve: () => serveCommand(ctx),
      migrate: () => migrateCommand(ctx),
      config: () => configCommand(ctx),
    },
    async run({ args }) {
      if (args._.length > 0) return;
      if (args["dry-run"]) return dryRun(ctx, addressFlags(args));
      throw new CliError(EXIT_USAGE, [await renderUsage(root)]);
    },
  });
  return root;
}
