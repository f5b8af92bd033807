import { parseArgs } from "node:util";
import { createVellum } from "../../packages/core/dist/index.js";
import { defaultPlugins } from "../../packages/vellum/dist/index.js";

/**
 * Vellum with `vellum serve`'s default plugins except those named by `--without` (log level warn):
 * what one plugin costs the rest, A/B against `vellum serve` in the same run.
 * Usage: node vellum-defaults-without.mjs --port <n> --data-dir <dir> --without <name>[,<name>…];
 * the API key comes from SERVICE_API_KEY.
 */
const { values } = parseArgs({
  options: { port: { type: "string" }, "data-dir": { type: "string" }, without: { type: "string" } },
});
const port = Number(values.port);
const dataDir = values["data-dir"];
const apiKey = process.env.SERVICE_API_KEY;
const without = (values.without ?? "").split(",").filter(Boolean);
const plugins = defaultPlugins();
const unknown = without.filter((name) => !plugins.some((plugin) => plugin.name === name));
if (!Number.isInteger(port) || port <= 0 || !dataDir || !apiKey || without.length === 0 || unknown.length > 0) {
  console.error(
    "vellum-defaults-without: pass --port <n> --data-dir <dir> --without <default plugin>[,…] and set SERVICE_API_KEY" +
      (unknown.length ? `; not a default plugin: ${unknown.join(", ")}` : ""),
  );
  process.exit(2);
}

const vellum = createVellum({
  dataDir,
  plugins: plugins.filter((plugin) => !without.includes(plugin.name)),
  security: { apiKey },
  logLevel: 1,
});
await vellum.listen({ port, host: "127.0.0.1", signals: true });
