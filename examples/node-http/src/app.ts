import { createServer, type Server } from "node:http";
import { createVellum, type Vellum } from "@vellum/core";
import { defaultPlugins } from "vellum";

export interface App {
  server: Server;
  vellum: Vellum;
}

/**
 * A host server that owns `/` and `/about` and hands every other request to Vellum's Node
 * listener. Vellum's routes keep their contract paths (`/api/v1/...`, `/health/...`).
 */
export async function createApp(options: { dataDir: string; apiKey: string }): Promise<App> {
  const vellum = createVellum({
    dataDir: options.dataDir,
    plugins: defaultPlugins(),
    security: { apiKey: options.apiKey },
    accessLog: false,
  });
  await vellum.ready();
  const server = createServer((req, res) => {
    if (req.url === "/" || req.url === "/about") {
      res.setHeader("content-type", "text/plain; charset=utf-8");
      res.end("my app's own page\n");
      return;
    }
    vellum.handler(req, res);
  });
  server.on("close", () => void vellum.close());
  return { server, vellum };
}
