import { defineCommand } from "citty";
import type { CliContext } from "../cli-context.js";
import type { ResolvedGroup } from "../setting-groups.js";
import { loadSettings } from "../settings.js";
import { showValue } from "../show.js";
import { formatTable } from "../table.js";
import { addressArgs, addressFlags } from "./args.js";

/** One row per setting (named by its variable, else its config-file key), grouped by owner. */
function configReport(groups: readonly ResolvedGroup[]): string[] {
  const rows = groups.flatMap((group) =>
    group.settings.length === 0
      ? [[group.name, "(no settings)", "", ""]]
      : group.settings.map((entry) => [
          group.name,
          entry.declaration.env ?? entry.key,
          showValue(entry.declaration, entry.value),
          entry.source,
        ]),
  );
  return formatTable(["GROUP", "SETTING", "VALUE", "SOURCE"], rows);
}

/** `vellum config`: the effective configuration and where each value came from; starts nothing. */
export function configCommand(ctx: CliContext) {
  return defineCommand({
    meta: {
      name: "config",
      description: "Print the effective configuration: every setting, its value and its source (never a secret)",
    },
    args: addressArgs,
    async run({ args }) {
      const { groups } = await loadSettings(ctx, addressFlags(args));
      for (const line of configReport(groups)) ctx.print(line);
    },
  });
}
