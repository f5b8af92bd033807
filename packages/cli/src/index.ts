import { renderUsage, runCommand } from "citty";
import { createConsola, LogLevels } from "consola";
import { normalizeArgv } from "./argv.js";
import { listPluginCommands, runPluginCommand } from "./commands/plugin-command.js";
import type { CliContext, CliOptions } from "./cli-context.js";
import { CliError, describeError, EXIT_OK } from "./errors.js";
import { BUILTIN_COMMANDS, createRootCommand } from "./main.js";
import { parseLogLevel } from "./parse.js";
import { walkArgv } from "./usage.js";

export type { ApiKeyResult } from "./api-key.js";
export { apiKeyPath, ensureApiKey, generateApiKey, readStoredApiKey } from "./api-key.js";
export { normalizeArgv } from "./argv.js";
export { CONFIG_FILE_NAMES, type FileConfig, type LoadedConfigFile, loadConfigFile } from "./config-file.js";
export type { CliContext, CliOptions } from "./cli-context.js";
export {
  type AddressFlags,
  type EnvironmentResult,
  type ReadEnvironmentOptions,
  type ResolvedConfig,
  readEnvironment,
} from "./env.js";
export { CliError, type ConfigProblem, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, formatProblem } from "./errors.js";
export { CLI_SETTINGS, type CliSettingDeclaration } from "./own-settings.js";
export { type ReferenceOptions, renderConfigReference } from "./reference.js";
export type { SettingSource } from "./setting-groups.js";

function createContext(options: CliOptions): CliContext {
  const level = parseLogLevel(options.env.SERVICE_LOG_LEVEL?.trim() || "info");
  return {
    ...options,
    logger: createConsola({ level: level.ok ? level.value : LogLevels.info }),
    print: (line) => process.stdout.write(`${line}\n`),
    printError: (line) => process.stderr.write(`${line}\n`),
  };
}

/**
 * Runs the `vellum` command line and resolves to its exit code: 0 ok, 1 failure, 2 bad usage or configuration.
 * `serve` resolves once the server listens; the process then lives until a signal closes it.
 */
export async function runCli(options: CliOptions): Promise<number> {
  const ctx = createContext(options);
  const argv = normalizeArgv(options.argv);
  const root = createRootCommand(ctx);
  try {
    const first = argv[0];
    if (first === "commands") return await listPluginCommands(ctx, argv.slice(1));
    if (first !== undefined && !first.startsWith("-") && !(first in BUILTIN_COMMANDS)) {
      if (argv.includes("--help") || argv.includes("-h")) {
        ctx.print(`Usage: vellum ${first} … — a command added by a plugin; 'vellum commands' lists them.`);
        return EXIT_OK;
      }
      return await runPluginCommand(ctx, argv);
    }
    const walk = await walkArgv(root, argv);
    if (walk.help) {
      ctx.print(await renderUsage(walk.chain.at(-1) ?? root, walk.chain.at(-2)));
      return EXIT_OK;
    }
    if (walk.problem) throw CliError.usage(walk.problem);
    if (walk.version) {
      ctx.print(options.version);
      return EXIT_OK;
    }
    await runCommand(root, { rawArgs: argv });
    return EXIT_OK;
  } catch (error) {
    const { exitCode, lines } = describeError(error);
    for (const line of lines) ctx.printError(line);
    return exitCode;
  }
}
