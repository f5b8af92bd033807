import type { AnyVellumPlugin, SettingDeclaration } from "@vellum/core";
import { CLI_SETTINGS } from "./own-settings.js";
import {
  COMMAND_LINE_HEADING,
  CONFIG_FILE,
  EMBEDDING,
  introduction,
  PLUGINS_INTRODUCTION,
  VALUE_NOTES,
} from "./reference-prose.js";
import { cliGroup, type DeclaredGroup, pluginGroup } from "./setting-groups.js";
import { showPlain } from "./show.js";
import { settingPrefixes, unclaimedWarning } from "./unclaimed.js";

export interface ReferenceOptions {
  /** The host's `CliOptions.settingPrefixes`, named where the reference explains the unclaimed-variable warning. */
  settingPrefixes?: readonly string[];
}

const code = (text: string) => `\`${text}\``;
const cell = (text: string) => text.replaceAll("|", "\\|");

function defaultCell(declaration: SettingDeclaration): string {
  if (declaration.defaultText !== undefined) return code(declaration.defaultText);
  if (declaration.default === undefined || declaration.secret) return "—";
  if (Array.isArray(declaration.default) && declaration.default.length === 0) return "empty";
  // In the variable's terms (`10` seconds), as `vellum config` shows it; the config-file key takes base units.
  return code(declaration.show ? declaration.show(declaration.default) : showPlain(declaration.default));
}

function settingsTable(group: DeclaredGroup): string[] {
  return [
    "| variable | config-file key | default | meaning |",
    "|---|---|---|---|",
    ...group.settings.map(
      ({ key, declaration }) =>
        `| ${[
          declaration.env ? code(declaration.env) : "—",
          code(key),
          defaultCell(declaration),
          declaration.description,
        ]
          .map(cell)
          .join(" | ")} |`,
    ),
  ];
}

function pluginSection(group: DeclaredGroup): string[] {
  const body = group.settings.length > 0 ? settingsTable(group) : [`\`${group.name}\` declares no settings.`];
  return [`### \`${group.name}\``, "", ...body, ""];
}

/** The line a declaration's own parser gives for `text`; nothing when it accepts it or has no variable. */
function problemLine(declaration: SettingDeclaration, text: string): string[] {
  const parsed = declaration.parse(text);
  return parsed.ok || !declaration.env ? [] : [`vellum: ${declaration.env}: ${parsed.problem}`];
}

/** Real problem lines: a few of the command line's, and the first plugin variable that refuses `abc`. */
function problemExamples(groups: readonly DeclaredGroup[]): string[] {
  const pluginLine = groups
    .flatMap((group) => group.settings)
    .filter(({ declaration }) => declaration.env !== undefined && !declaration.secret)
    .flatMap(({ declaration }) => problemLine(declaration, "abc"))
    .slice(0, 1);
  return [
    ...problemLine(CLI_SETTINGS.port, "abc"),
    ...problemLine(CLI_SETTINGS["security.apiKey"], "too-short"),
    ...pluginLine,
    ...problemLine(CLI_SETTINGS["database.sqlite.path"], "postgres://vellum:secret@db.example/vellum"),
  ];
}

/**
 * The whole of `docs/config.md`: the hand-written explanations around one table of the command line's and
 * kernel's settings and one per plugin, generated from the declarations (`npm run docs:config` writes it).
 */
export function renderConfigReference(plugins: readonly AnyVellumPlugin[], options: ReferenceOptions = {}): string {
  const groups = plugins.map(pluginGroup);
  const lines = [
    ...introduction({
      problems: problemExamples(groups),
      warning: unclaimedWarning("SERVICE_LOG_LEVLE"),
      prefixes: settingPrefixes(options.settingPrefixes),
    }),
    ...COMMAND_LINE_HEADING,
    ...settingsTable(cliGroup()),
    ...VALUE_NOTES,
    ...PLUGINS_INTRODUCTION,
    ...groups.flatMap(pluginSection),
    ...CONFIG_FILE,
    ...EMBEDDING,
  ];
  return `${lines.join("\n")}\n`;
}
