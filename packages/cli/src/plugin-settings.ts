import { type AnyVellumPlugin, checkSettings, readSettingsFromEnv, settingDefaults } from "@vellum/core";
import type { ConfigProblem } from "./errors.js";
import { mergeLayers } from "./merge.js";
import { pluginGroup, type ResolvedGroup, type SettingSource } from "./setting-groups.js";

type Options = Record<string, unknown>;

export interface InstalledPlugin {
  plugin: AnyVellumPlugin;
  /** Who created it, and so the source of its factory's options: the host's defaults or the config file. */
  origin: "default" | "file";
}

export interface PluginSettings {
  /** The file's `pluginOptions`, with each installed plugin's environment values over its entry. */
  pluginOptions: Record<string, Options>;
  /** Each installed plugin's declared settings with their effective value and source. */
  groups: ResolvedGroup[];
  problems: ConfigProblem[];
}

interface OnePlugin {
  /** Its `pluginOptions` entry with the environment over the file's; undefined when no variable is set. */
  layered?: Options;
  group: ResolvedGroup;
  problems: ConfigProblem[];
}

function readPlugin(
  { plugin, origin }: InstalledPlugin,
  env: NodeJS.ProcessEnv,
  file: Options,
  dataDir: string,
): OnePlugin {
  const { definition } = plugin;
  const declared = definition.settings ?? {};
  const group = pluginGroup(plugin);
  const fromEnv = readSettingsFromEnv(declared, env);
  const envOptions = fromEnv.options as Options;
  const layered = mergeLayers<Options>(file, envOptions);
  const effective = mergeLayers<Options>(definition.defaults ?? {}, settingDefaults(declared), layered, plugin.options);
  const sourceOf = (setting: string): SettingSource => {
    if ((plugin.options as Options)[setting] !== undefined) return origin;
    if (envOptions[setting] !== undefined) return "env";
    return file[setting] !== undefined ? "file" : "default";
  };
  const nameOf = (setting: string): string => {
    const entry = group.settings.find((candidate) => candidate.setting === setting);
    const key = entry?.key ?? `pluginOptions.${definition.configKey ?? plugin.name}.${setting}`;
    return sourceOf(setting) === "file" ? key : (entry?.declaration.env ?? key);
  };
  const unreadable = new Set(fromEnv.problems.map((problem) => problem.setting));
  const checked = [
    ...checkSettings(declared, effective),
    ...(definition.checkSettings?.(effective, { dataDir }) ?? []),
  ].filter((problem) => !unreadable.has(problem.setting));
  return {
    layered: Object.keys(envOptions).length > 0 ? layered : undefined,
    group: {
      name: group.name,
      settings: group.settings.map((entry) => ({
        ...entry,
        value: effective[entry.setting],
        source: sourceOf(entry.setting),
      })),
    },
    problems: [
      ...fromEnv.problems.map(({ variable, message }) => ({ variable, message })),
      ...checked.map(({ setting, message }) => ({ variable: nameOf(setting), message })),
    ],
  };
}

/**
 * Reads the settings every installed plugin declares: its variables from `env` over the config file's
 * `pluginOptions[configKey]`, then checks the effective options the kernel will compute (factory options over
 * `pluginOptions` over the declared and plain defaults) with the declarations and the plugin's `checkSettings`.
 * A problem names the variable, or the config-file key when the value came from the file.
 */
export function readPluginSettings(
  installed: readonly InstalledPlugin[],
  env: NodeJS.ProcessEnv,
  context: { pluginOptions?: Record<string, Options> | undefined; dataDir: string },
): PluginSettings {
  const fileOptions = context.pluginOptions ?? {};
  const result: PluginSettings = { pluginOptions: { ...fileOptions }, groups: [], problems: [] };
  for (const entry of installed) {
    const configKey = entry.plugin.definition.configKey ?? entry.plugin.name;
    const { layered, group, problems } = readPlugin(entry, env, fileOptions[configKey] ?? {}, context.dataDir);
    if (layered) result.pluginOptions[configKey] = layered;
    result.groups.push(group);
    result.problems.push(...problems);
  }
  return result;
}
