import { resolvePlugins } from "@vellum/core";
import type { CliContext } from "../cli-context.js";
import type { AddressFlags } from "../env.js";
import { CliError, describeError, EXIT_USAGE, isVellumError } from "../errors.js";
import { loadSettings } from "../settings.js";

/** `vellum --dry-run`: every configuration check and the plugin graph, without touching the data directory. */
export async function dryRun(ctx: CliContext, flags: AddressFlags): Promise<void> {
  const { config, plugins } = await loadSettings(ctx, flags);
  let ordered: ReturnType<typeof resolvePlugins>;
  try {
    ordered = resolvePlugins(plugins);
  } catch (error) {
    if (!isVellumError(error)) throw error;
    // The same line `serve` prints for this error, but always exit 2: a bad plugin graph is bad configuration.
    throw new CliError(EXIT_USAGE, describeError(error).lines);
  }
  const names = ordered.map((plugin) => plugin.name).join(", ");
  ctx.print(
    `vellum ${ctx.version}: configuration OK; ${ordered.length} plugin(s)${names ? ` (${names})` : ""}; ` +
      `would listen on ${config.host}:${config.port}; data directory ${config.dataDir}; base URL ${config.baseUrl}`,
  );
}
