import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { answerClientError } from "./client-error.js";
import type { NodeListener } from "./handler.js";

export interface ListenOptions {
  port?: number;
  host?: string;
  /** Install SIGTERM/SIGINT handlers that shut down gracefully and then exit the process. */
  signals?: boolean;
  /** Called once shutdown has finished (after a signal). Default: `process.exit(0)`. */
  onShutdown?: (signal: string) => void;
}

export interface VellumServer {
  readonly url: string;
  readonly server: Server;
  /** Stops accepting, lets in-flight requests finish (up to the shutdown timeout), closes Vellum. */
  close(): Promise<void>;
}

export interface Listenable {
  ready(): Promise<void>;
  close(): Promise<void>;
  readonly handler: NodeListener;
}

/** Runs Vellum standalone on `node:http`: ready first, then listen; graceful close on signals. */
export async function listen(vellum: Listenable, options: ListenOptions = {}): Promise<VellumServer> {
  await vellum.ready();
  const server = createServer(vellum.handler);
  server.on("clientError", answerClientError);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 3000, options.host ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await vellum.close();
      server.closeAllConnections();
      await stopped;
    })();
    return closing;
  };
  if (options.signals) {
    for (const signal of ["SIGTERM", "SIGINT"] as const) {
      process.once(signal, () => {
        void close().finally(() => (options.onShutdown ?? (() => process.exit(0)))(signal));
      });
    }
  }
  return { url: `http://${host}:${address.port}`, server, close };
}
