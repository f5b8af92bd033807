import { createVellum } from "@vellum/core";
import { defineCommand } from "citty";
import type { CliContext } from "../cli-context.js";
import { CliError, EXIT_FAILURE } from "../errors.js";
import { loadSettings, toVellumConfig } from "../settings.js";
import { formatTable } from "../table.js";
import { addressFlags, dataDirArg } from "./args.js";

interface MigrationRow {
  plugin: string;
  name: string;
  status: string;
  error?: unknown;
}

function message(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error ?? "");
  return text.split("\n", 1)[0] ?? "";
}

/** Prints one row per migration and a count per status. */
export function migrationReport(results: readonly MigrationRow[]): string[] {
  if (results.length === 0) return ["vellum: no pending migrations"];
  const rows = results.map((row) => [
    row.plugin,
    row.name,
    row.status,
    row.error === undefined ? "" : message(row.error),
  ]);
  const counts = new Map<string, number>();
  for (const row of results) counts.set(row.status, (counts.get(row.status) ?? 0) + 1);
  const summary = [...counts].map(([status, count]) => `${count} ${status}`).join(", ");
  return [...formatTable(["PLUGIN", "MIGRATION", "STATUS", "ERROR"], rows), `vellum: migrations: ${summary}`];
}

/** `vellum migrate`: runs pending migrations without starting the server; exit 1 when one fails. */
export function migrateCommand(ctx: CliContext) {
  return defineCommand({
    meta: { name: "migrate", description: "Run pending database migrations and print the result of each" },
    args: dataDirArg,
    async run({ args }) {
      const settings = await loadSettings(ctx, addressFlags(args));
      const vellum = createVellum(toVellumConfig(settings, ctx));
      try {
        const outcome = await vellum.migrate();
        for (const line of migrationReport(outcome.results)) ctx.print(line);
        const failed = outcome.results.find((row) => row.status === "failed" || row.error !== undefined);
        if (outcome.error || failed) {
          const reason = outcome.error
            ? message(outcome.error)
            : `migration ${failed?.plugin}/${failed?.name} failed: ${message(failed?.error)}`;
          throw new CliError(EXIT_FAILURE, [`vellum: ${reason}`]);
        }
      } finally {
        await vellum.close();
      }
    },
  });
}
