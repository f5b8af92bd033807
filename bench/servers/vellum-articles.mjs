import { parseArgs } from "node:util";
import { createVellum } from "../../packages/core/dist/index.js";
import { articles } from "../../plugins/articles/dist/index.js";

/**
 * Vellum with only the articles plugin, configured like `vellum serve` (log level warn): isolates
 * the plugin's own cost from the other default plugins (search indexes every write).
 * Usage: node vellum-articles.mjs --port <n> --data-dir <dir>; the API key comes from SERVICE_API_KEY.
 */
const { values } = parseArgs({ options: { port: { type: "string" }, "data-dir": { type: "string" } } });
const port = Number(values.port);
const dataDir = values["data-dir"];
const apiKey = process.env.SERVICE_API_KEY;
if (!Number.isInteger(port) || port <= 0 || !dataDir || !apiKey) {
  console.error("vellum-articles: pass --port <n> --data-dir <dir> and set SERVICE_API_KEY");
  process.exit(2);
}

const vellum = createVellum({ dataDir, plugins: [articles()], security: { apiKey }, logLevel: 1 });
await vellum.listen({ port, host: "127.0.0.1", signals: true });
