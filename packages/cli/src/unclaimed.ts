/** The contract's own namespace: every `SERVICE_*` variable is a setting of the command line or of a plugin. */
const CONTRACT_PREFIX = "SERVICE_";

/**
 * The prefixes that mark a variable as a setting: `SERVICE_` and the host's own (`CliOptions.settingPrefixes`,
 * the namespaces its plugins use), without repeats.
 */
export function settingPrefixes(hostPrefixes: readonly string[] = []): string[] {
  return [...new Set([CONTRACT_PREFIX, ...hostPrefixes])];
}

/**
 * Variables that look like settings (their name starts with one of `prefixes`) and are set to something, but
 * that nothing installed declares: a misspelling, or the setting of a plugin that is not installed. Sorted.
 */
export function unclaimedVariables(
  env: NodeJS.ProcessEnv,
  prefixes: readonly string[],
  declared: ReadonlySet<string>,
): string[] {
  return Object.keys(env)
    .filter((name) => prefixes.some((prefix) => name.startsWith(prefix)))
    .filter((name) => !declared.has(name) && (env[name]?.trim() ?? "") !== "")
    .sort();
}

/** The warning for one such variable: its name only, never its value. */
export function unclaimedWarning(name: string): string {
  return `vellum: warning: ${name} is set but no installed plugin reads it`;
}

/** The warning for options in the config file under a key no installed plugin has (`pluginOptions.<key>`). */
export function unclaimedOptionsWarning(key: string): string {
  return `vellum: warning: pluginOptions.${key} in the config file belongs to no installed plugin`;
}
