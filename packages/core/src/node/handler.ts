import type { IncomingMessage, ServerResponse } from "node:http";
import { toNodeHandler } from "srvx/node";

/** The slice of a Vellum instance the Node adapter needs. */
export interface FetchTarget {
  /** Answers a request that no shortcut answered. */
  fetch(request: Request): Promise<Response>;
  handles(pathname: string): boolean;
  /** Answers a GET or HEAD from a plugin's prepared responses before routing (`router.shortcut`). */
  shortcut?(req: IncomingMessage, res: ServerResponse): boolean;
}

export type NodeListener = (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void) => void;

/**
 * A Node `(req, res)` listener for `http.createServer`, which also works as Connect/Express
 * middleware: given `next`, a path Vellum has no route for is passed on to the host app.
 */
export function createNodeListener(target: FetchTarget): NodeListener {
  const handle = toNodeHandler((request: Request) => target.fetch(request));
  return (req, res, next) => {
    if (target.shortcut?.(req, res)) return;
    if (next) {
      const pathname = new URL(req.url ?? "/", "http://localhost").pathname;
      if (!target.handles(pathname)) return next();
    }
    void Promise.resolve(handle(req as never, res as never)).catch((error: unknown) => {
      if (next) return next(error);
      if (!res.headersSent) res.statusCode = 500;
      res.end();
    });
  };
}
