import { runCommand } from "citty";
import { createConsola, LogLevels } from "consola";
import { jsonReporter } from "./json-log.js";
import { normalizeArgv } from "./argv.js";
import { colorEnabled, colorFilteredStream, textFor } from "./color.js";
import { textReporter } from "./text-log.js";
import { runPluginCommand } from "./commands/plugin-command.js";
import type { CliContext, CliOptions } from "./cli-context.js";
import { CliError, describeError, EXIT_OK } from "./errors.js";
import { builtinHelp, helpCommandHelp, pluginCommandHelp } from "./help.js";
import { createRootCommand, isBuiltinCommand } from "./main.js";
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
  // Everything the CLI writes goes through these: ANSI codes reach a stream only when `colorEnabled` says so.
  const color = {
    stdout: colorEnabled(options.env, process.stdout),
    stderr: colorEnabled(options.env, process.stderr),
  };
  const out = textFor(color.stdout);
  const err = textFor(color.stderr);
  const streams = {
    stdout: colorFilteredStream(process.stdout, color.stdout),
    stderr: colorFilteredStream(process.stderr, color.stderr),
  };
  const json = options.env.SERVICE_LOG_FORMAT?.trim().toLowerCase() === "json";
  return {
    ...options,
    logger: createConsola({
      level: level.ok ? level.value : LogLevels.info,
      ...streams,
      reporters: [json ? jsonReporter(streams) : textReporter(streams)],
    }),
    print: (line) => process.stdout.write(`${out(line)}\n`),
    printError: (line) => process.stderr.write(`${err(line)}\n`),
  };
}

const wantsHelp = (argv: readonly string[]) => {
  const end = argv.indexOf("--");
  return (end === -1 ? argv : argv.slice(0, end)).some((token) => token === "--help" || token === "-h");
};

/**
 * Runs the `vellum` command line and resolves to its exit code: 0 ok, 1 failure, 2 bad usage or configuration.
 * `serve` resolves once the server listens; the process then lives until a signal closes it.
 */
export async function runCli(options: CliOptions): Promise<number> {
  const ctx = createContext(options);
  let argv = normalizeArgv(options.argv);
  const root = createRootCommand(ctx);
  try {
    if (argv[0] === "help") {
      // `vellum help <command…>` is `vellum <command…> --help`, by construction.
      const rest = argv.slice(1);
      if (rest[0] === "help" || rest[0] === "--help" || rest[0] === "-h") {
        ctx.print(helpCommandHelp());
        return EXIT_OK;
      }
      argv = [...rest, "--help"];
    }
    const first = argv[0];
    if (first !== undefined && !first.startsWith("-") && !isBuiltinCommand(first)) {
      if (wantsHelp(argv)) {
        ctx.print(await pluginCommandHelp(ctx, argv));
        return EXIT_OK;
      }
      return await runPluginCommand(ctx, argv);
    }
    const walk = await walkArgv(root, argv);
    if (walk.help) {
      ctx.print(await builtinHelp(ctx, walk.chain));
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
