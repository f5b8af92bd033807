import { type DeclaredCommand, matchCommand } from "@vellum/core";
import type { ArgsDef } from "citty";
import { style } from "./color.js";
import { dataDirArg } from "./commands/args.js";
import { installedCommands, parseCommandLine } from "./commands/plugin-command.js";
import type { CliContext } from "./cli-context.js";
import { CliError, EXIT_USAGE } from "./errors.js";
import { type AnyCommand, resolveValue } from "./usage.js";

// `vellum --help`, `vellum <command> --help` and `vellum help <command>`, for the built-in commands (their citty
// definitions) and for the plugins' (their declarations: nothing is started, no data is touched). Pages are
// styled freely; `ctx.print` drops the styles when colour is off (see color.ts).

type Row = readonly [left: string, right: string];

interface Section {
  heading: string;
  rows: Row[];
}

interface HelpPage {
  description: string;
  usage: string[];
  sections: Section[];
  footer?: string;
}

const HELP_ROW: Row = ["-h, --help", "Show this help"];
const VERSION_ROW: Row = ["-v, --version", "Print the version"];

/** The row of `help` itself in the root page, and its own page. */
const HELP_COMMAND = {
  usage: "help [command]",
  description: "Show the help of a command: 'vellum help <command>' is 'vellum <command> --help'",
};

function renderPage(page: HelpPage): string {
  const sections = page.sections.filter((section) => section.rows.length > 0);
  const width = Math.max(0, ...sections.flatMap((section) => section.rows.map(([left]) => left.length)));
  const lines = [page.description, "", style.heading("USAGE"), ...page.usage.map((line) => `  ${style.command(line)}`)];
  for (const section of sections) {
    lines.push("", style.heading(section.heading));
    for (const [left, right] of section.rows) {
      lines.push(right ? `  ${style.command(left.padEnd(width))}  ${right}` : `  ${style.command(left)}`);
    }
  }
  if (page.footer) lines.push("", page.footer);
  return lines.join("\n");
}

/** One row per option of a citty argument definition: `--port <port>  Port to listen on (default: …)`. */
function optionRows(args: ArgsDef): Row[] {
  const rows: Row[] = [];
  for (const [name, def] of Object.entries(args)) {
    if (def.type === "positional") continue;
    const aliases = "alias" in def && def.alias !== undefined ? [def.alias].flat().map((alias) => `-${alias}, `) : [];
    const value = def.type === "string" || def.type === "enum" ? ` <${def.valueHint ?? name}>` : "";
    const fallback = "default" in def && def.default !== undefined ? ` (default: ${String(def.default)})` : "";
    rows.push([`${aliases.join("")}--${name}${value}`, `${def.description ?? ""}${fallback}`]);
  }
  return rows;
}

function positionalUsage(args: ArgsDef): string {
  return Object.entries(args)
    .filter(([, def]) => def.type === "positional")
    .map(([name, def]) => (def.required === false || def.default !== undefined ? ` [${name}]` : ` <${name}>`))
    .join("");
}

async function rootPage(ctx: CliContext, root: AnyCommand): Promise<HelpPage> {
  const meta = await resolveValue(root.meta ?? {});
  const args = await resolveValue(root.args ?? {});
  const builtins: Row[] = [];
  for (const [name, sub] of Object.entries(await resolveValue(root.subCommands ?? {}))) {
    const subMeta = await resolveValue((await resolveValue(sub as AnyCommand)).meta ?? {});
    if (!subMeta.hidden) builtins.push([name, subMeta.description ?? ""]);
  }
  builtins.push([HELP_COMMAND.usage, HELP_COMMAND.description]);
  const { commands, problems } = await installedCommands(ctx);
  for (const problem of problems) {
    ctx.printError(`vellum: warning: ${problem.variable}: ${problem.message} (its plugins' commands are not listed)`);
  }
  return {
    description: `${meta.description ?? "vellum"} (vellum ${ctx.version})`,
    usage: ["vellum <command> [options]", "vellum --dry-run [options]"],
    sections: [
      { heading: "COMMANDS", rows: builtins },
      {
        heading: "PLUGIN COMMANDS",
        rows: commands.map((command) => [command.name, `${command.description} (${command.plugin})`]),
      },
      { heading: "OPTIONS", rows: [...optionRows(args), HELP_ROW, VERSION_ROW] },
    ],
    footer: `Run 'vellum help <command>' or 'vellum <command> --help' for the options of a command.`,
  };
}

/** The page of a built-in command: `chain` is the root, then the subcommands named on the command line. */
async function builtinPage(chain: readonly AnyCommand[]): Promise<HelpPage> {
  const command = chain.at(-1) as AnyCommand;
  const names: string[] = [];
  for (const entry of chain.slice(1)) names.push((await resolveValue(entry.meta ?? {})).name ?? "");
  const meta = await resolveValue(command.meta ?? {});
  const args = await resolveValue(command.args ?? {});
  const subCommands = await resolveValue(command.subCommands ?? {});
  const subRows: Row[] = [];
  for (const [name, sub] of Object.entries(subCommands)) {
    const subMeta = await resolveValue((await resolveValue(sub as AnyCommand)).meta ?? {});
    if (!subMeta.hidden) subRows.push([name, subMeta.description ?? ""]);
  }
  const path = ["vellum", ...names].join(" ");
  return {
    description: meta.description ?? path,
    usage: [`${path}${subRows.length > 0 ? " <command>" : ""} [options]${positionalUsage(args)}`],
    sections: [
      { heading: "COMMANDS", rows: subRows },
      { heading: "OPTIONS", rows: [...optionRows(args), HELP_ROW] },
    ],
  };
}

function pluginPage(command: DeclaredCommand): HelpPage {
  const own: Row[] = Object.entries(command.options).map(([name, option]) => [
    `--${name}${option.value ? ` <${option.value}>` : ""}`,
    option.description,
  ]);
  return {
    description: command.description,
    usage: [`vellum ${command.name} [options]`],
    sections: [{ heading: "OPTIONS", rows: [...own, ...optionRows(dataDirArg), HELP_ROW] }],
    footer: command.offline
      ? `Added by the ${command.plugin} plugin. It runs offline: it does not start Vellum or open the database ` +
        `through it, and uses the configuration 'vellum serve' would use ('vellum config' prints it).`
      : `Added by the ${command.plugin} plugin. It applies pending migrations first, then runs without queue workers ` +
        `or the scheduler, with the configuration 'vellum serve' would use ('vellum config' prints it).`,
  };
}

/** `vellum --help` and `vellum <built-in command> --help`. */
export async function builtinHelp(ctx: CliContext, chain: readonly AnyCommand[]): Promise<string> {
  const [root] = chain;
  if (chain.length <= 1 && root) return renderPage(await rootPage(ctx, root));
  return renderPage(await builtinPage(chain));
}

/** `vellum help help`. */
export function helpCommandHelp(): string {
  return renderPage({
    description: HELP_COMMAND.description,
    usage: [`vellum ${HELP_COMMAND.usage}`],
    sections: [{ heading: "OPTIONS", rows: [HELP_ROW] }],
  });
}

/**
 * `vellum <plugin command> --help`: the command named by the longest prefix of the words in `argv`, from the
 * installed plugins' declarations. An unknown command is one line and exit 2.
 */
export async function pluginCommandHelp(ctx: CliContext, argv: readonly string[]): Promise<string> {
  const words = parseCommandLine(argv).words.filter((word) => !word.startsWith("-"));
  const { commands, problems } = await installedCommands(ctx);
  const found = matchCommand(commands, words);
  if (found) return renderPage(pluginPage(found.command));
  if (problems.length > 0) throw CliError.configuration(problems);
  const first = words[0] ?? "";
  const near = commands.filter((command) => command.name.startsWith(`${first} `)).map((command) => command.name);
  const hint = near.length > 0 ? `did you mean ${near.map((name) => `'${name}'`).join(" or ")}?` : "";
  throw new CliError(EXIT_USAGE, [
    `vellum: unknown command '${first}' (${hint || "'vellum --help' lists the commands"})`,
  ]);
}
