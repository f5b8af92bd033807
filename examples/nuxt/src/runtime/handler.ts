import type { IncomingMessage, ServerResponse } from "node:http";
import { useVellum } from "./vellum.js";

/** The part of an h3 v1 event this handler reads (imported from nowhere, so any h3 copy fits). */
interface NodeEvent {
  node: { req: IncomingMessage; res: ServerResponse };
  context: { params?: Record<string, string> };
}

/**
 * Registered on `<prefix>/**`: the `**` part (h3 puts it in `params._`) becomes the path Vellum
 * sees, so `/cms/api/v1/articles?limit=5` reaches it as `/api/v1/articles?limit=5`. Vellum's
 * Node listener answers; the promise settles when the response is finished, which tells h3
 * that the request was handled.
 */
export default async function vellumHandler(event: NodeEvent): Promise<void> {
  const vellum = await useVellum();
  const { req, res } = event.node;
  const query = req.url?.includes("?") ? req.url.slice(req.url.indexOf("?")) : "";
  // Connect's convention: the full path stays in `originalUrl`, from which Vellum reads the prefix
  // it is mounted under, so its links (Location, media URLs, error `docs`, cookie Path) carry it.
  Object.assign(req, { originalUrl: req.url });
  req.url = `/${event.context.params?._ ?? ""}${query}`;
  await new Promise<void>((resolve) => {
    res.once("close", resolve);
    vellum.handler(req, res);
  });
}
