import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * A fresh data dir under the OS temp dir (`<prefix>…`) with the built default plugins' schema
 * migrated and nothing else; the caller removes it.
 * @param {string} prefix
 * @returns {Promise<string>}
 */
export async function migratedDataDir(prefix) {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const { createVellum } = await import("../../packages/core/dist/index.js");
  const { defaultPlugins } = await import("../../packages/vellum/dist/index.js");
  const vellum = createVellum({ dataDir: dir, plugins: defaultPlugins(), logLevel: 0 });
  const outcome = await vellum.migrate();
  await vellum.close();
  if (outcome.error) throw outcome.error;
  return dir;
}
