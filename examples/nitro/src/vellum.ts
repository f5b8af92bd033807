import { createVellum, type Vellum } from "@vellum/core";
import { defaultPlugins } from "vellum";

/** Where the host app mounts Vellum. Vellum itself keeps its contract paths (`/api/v1/...`). */
export const CMS_PREFIX = "/cms";

let instance: Promise<Vellum> | undefined;

/** The process's one Vellum instance: created on first use, answered only once ready. */
export function useVellum(): Promise<Vellum> {
  instance ??= start();
  return instance;
}

/** Closes the instance if one was started (the Nitro plugin calls this on shutdown). */
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

/**
 * The same request with `prefix` taken off its path, so `/cms/api/v1/articles` reaches Vellum
 * as `/api/v1/articles`. The body is passed on as a stream, unread.
 */
export function withoutPrefix(request: Request, prefix: string): Request {
  const url = new URL(request.url);
  url.pathname = url.pathname.slice(prefix.length) || "/";
  const body = request.method === "GET" || request.method === "HEAD" ? null : request.body;
  const init: RequestInit & { duplex: "half" } = {
    method: request.method,
    headers: request.headers,
    body,
    duplex: "half",
    signal: request.signal,
  };
  return new Request(url, init);
}
