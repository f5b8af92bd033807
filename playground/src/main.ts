import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createVellum, loadOrCreateSecret } from "@vellum/core";
import { defaultPlugins } from "vellum";
import { seed } from "./seed.js";

// The playground server that `npm run dev` runs (through playground/dev.mjs, which restarts it
// when a source changes): Vellum with every first-party plugin, seeded with demo content.

const dataDir = process.env.PLAYGROUND_DATA_DIR ?? fileURLToPath(new URL("../data", import.meta.url));
const port = Number(process.env.PORT ?? 3000);
const apiKey = await loadOrCreateSecret(dataDir, "api-key"); // <data>/settings/api-key, as `vellum serve` keeps it

const vellum = createVellum({ dataDir, plugins: defaultPlugins(), security: { apiKey } });
await vellum.ready();
const report = await seed(vellum, apiKey);
const server = await vellum.listen({ port, host: "127.0.0.1", signals: true });

const seeded = `${report.created.length} article(s) created, ${report.existing.length} already there`;
process.stdout.write(
  [
    "",
    `Vellum playground ready at ${server.url}`,
    `  API key:   ${apiKey}`,
    `  data:      ${dataDir} (delete it to start over)`,
    `  seed:      ${seeded}; image ${report.image}`,
    `  try:       curl ${server.url}/api/v1/articles?tag=guide`,
    `  write:     curl -H "Authorization: Bearer $KEY" ... (see ${join("playground", "README.md")})`,
    "",
  ].join("\n") + "\n",
);
