import { createVellum, type Vellum } from "@vellum/core";
import express, { type Express } from "express";
import { defaultPlugins } from "vellum";

export interface App {
  app: Express;
  vellum: Vellum;
}

/**
 * Vellum as Express middleware under `/cms`: requests for paths Vellum has a route for are
 * answered by Vellum (`/cms/api/v1/articles`); everything else falls through (`next()`) to the
 * routes registered after it. Links Vellum makes (`Location`, media URLs, error `docs`, the CSRF
 * cookie's `Path`) carry the `/cms` prefix Express stripped.
 */
export async function createApp(options: { dataDir: string; apiKey: string }): Promise<App> {
  const vellum = createVellum({
    dataDir: options.dataDir,
    plugins: defaultPlugins(),
    security: { apiKey: options.apiKey },
    accessLog: false,
  });
  await vellum.ready();
  const app = express();
  app.use("/cms", vellum.handler);
  app.get("/", (_req, res) => {
    res.type("text/plain").send("express home\n");
  });
  app.use((_req, res) => {
    res.status(404).type("text/plain").send("express 404\n");
  });
  return { app, vellum };
}
