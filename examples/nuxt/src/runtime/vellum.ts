import { createVellum, type Vellum } from "@vellum/core";
import { defaultPlugins } from "vellum";

let instance: Promise<Vellum> | undefined;

/** The server's one Vellum instance: created on first use, answered only once ready. */
export function useVellum(): Promise<Vellum> {
  instance ??= start();
  return instance;
}

/** Closes the instance if one was started (the plugin calls this when Nitro closes). */
export async function closeVellum(): Promise<void> {
  const started = instance;
  instance = undefined;
  if (started) await (await started).close();
}

async function start(): Promise<Vellum> {
  const apiKey = process.env.CMS_API_KEY;
  if (!apiKey) throw new Error("set CMS_API_KEY (24 characters or more)");
  const vellum = createVellum({
    dataDir: process.env.CMS_DATA_DIR ?? "./data",
    plugins: defaultPlugins(),
    security: { apiKey },
    accessLog: false,
  });
  await vellum.ready();
  return vellum;
}
