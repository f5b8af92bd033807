import type { AnyVellumPlugin, SettingDeclaration } from "@vellum/core";
import { CLI_SETTINGS, type CliSettingDeclaration } from "./own-settings.js";

/** Where an effective value came from, most specific first. */
export type SettingSource = "flag" | "env" | "file" | "default";

/** One declared setting: its name among its owner's declarations and its key in the config file. */
export interface DeclaredSetting {
  setting: string;
  /** `port`, `security.apiKey`, `pluginOptions.<configKey>.<setting>`. */
  key: string;
  declaration: CliSettingDeclaration;
}

/** The settings of one owner: the command line and kernel (`vellum`), or one plugin (by its name). */
export interface DeclaredGroup {
  name: string;
  settings: DeclaredSetting[];
}

export interface ResolvedSetting extends DeclaredSetting {
  value: unknown;
  source: SettingSource;
}

export interface ResolvedGroup {
  name: string;
  settings: ResolvedSetting[];
}

const CLI_GROUP = "vellum";

export function cliGroup(): DeclaredGroup {
  const entries = Object.entries(CLI_SETTINGS) as Array<[string, CliSettingDeclaration]>;
  return {
    name: CLI_GROUP,
    settings: entries.map(([setting, declaration]) => ({ setting, key: setting, declaration })),
  };
}

export function pluginGroup(plugin: AnyVellumPlugin): DeclaredGroup {
  const configKey = plugin.definition.configKey ?? plugin.name;
  const entries = Object.entries(plugin.definition.settings ?? {}) as Array<[string, SettingDeclaration | undefined]>;
  return {
    name: plugin.name,
    settings: entries.flatMap(([setting, declaration]) =>
      declaration ? [{ setting, key: `pluginOptions.${configKey}.${setting}`, declaration }] : [],
    ),
  };
}

/** Every variable the groups declare. */
export function declaredVariables(groups: readonly DeclaredGroup[]): Set<string> {
  return new Set(groups.flatMap((group) => group.settings.flatMap(({ declaration }) => declaration.env ?? [])));
}
