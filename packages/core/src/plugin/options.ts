import { createDefu } from "defu";
import type { VellumConfig } from "../config.js";
import { CoreErrors } from "../errors/vellum-error.js";
import type { AnyVellumPlugin } from "./define.js";
import { checkSettings, settingDefaults } from "./settings.js";

/** defu, except that a list from a higher layer replaces a lower one instead of joining it. */
const mergeOptions = createDefu((object, key, value) => {
  if (!Array.isArray(value)) return false;
  object[key] = value;
  return true;
});

/**
 * The plugin's effective options (inline, then `pluginOptions[configKey]`, then declared and
 * plain defaults), checked against its declared settings: `VELLUM_CONFIG_INVALID` names the first
 * problem by its variable when it has one.
 */
export function pluginOptions<O extends object>(plugin: AnyVellumPlugin, config: VellumConfig): Readonly<O> {
  const { definition } = plugin;
  const configKey = definition.configKey ?? plugin.name;
  const declared = definition.settings ?? {};
  const options = Object.freeze(
    mergeOptions(
      plugin.options,
      config.pluginOptions?.[configKey] ?? {},
      settingDefaults(declared),
      definition.defaults ?? {},
    ),
  ) as Readonly<O>;
  const [first] = [
    ...checkSettings(declared, options),
    ...(definition.checkSettings?.(options, { dataDir: config.dataDir }) ?? []),
  ];
  if (first) {
    const path = declared[first.setting]?.env ?? `pluginOptions.${configKey}.${first.setting}`;
    throw CoreErrors.configInvalid([path, first.message], { plugin: plugin.name });
  }
  return options;
}
