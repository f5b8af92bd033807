import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createVellum, type Vellum, type VellumConfig } from "@vellum/core";
import { listen, type VellumServer } from "@vellum/core/node";
import { createConsola } from "consola";
import { defaultPlugins } from "vellum";

// A real Vellum with the default plugins on 127.0.0.1, spoken to over real HTTP, and a front server that mounts it
// under a prefix and plays broken proxies.

export const API_KEY = "client-test-key-0123456789abcdef";

/** A 1×1 PNG. */
export const PNG = Uint8Array.from(
  atob("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="),
  (c) => c.charCodeAt(0),
);

export interface RunningVellum {
  vellum: Vellum;
  /** `http://127.0.0.1:<port>`: Vellum itself. */
  url: string;
  port: number;
  close(): Promise<void>;
}

export interface StartOptions {
  /** Listen on this port (a restart); default: any free one. */
  port?: number;
  /** Reuse a data dir (kept on close); default: a new temporary one, removed on close. */
  dataDir?: string;
  config?: Partial<VellumConfig>;
}

export async function startVellum(options: StartOptions = {}): Promise<RunningVellum> {
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), "vellum-client-")));
  const vellum = createVellum({
    dataDir,
    plugins: defaultPlugins(),
    logger: createConsola({ level: -Infinity }),
    accessLog: false,
    ...options.config,
    security: { apiKey: API_KEY, ...options.config?.security },
  });
  const server: VellumServer = await listen(vellum, { port: options.port ?? 0, host: "127.0.0.1" });
  const port = Number(new URL(server.url).port);
  return {
    vellum,
    url: server.url,
    port,
    async close() {
      await server.close();
      if (!options.dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export interface Front {
  /** `http://127.0.0.1:<port>`: `/cms/…` is Vellum; `/gateway`, `/portal`, `/not-envelope`, `/reset` are broken. */
  url: string;
  close(): Promise<void>;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** What a proxy or a captive portal in front of the service may answer, whatever the path below the prefix. */
const broken: Record<string, Handler> = {
  gateway: (_req, res) => {
    res.writeHead(502, { "content-type": "text/html" }).end("<html><body><h1>502 Bad Gateway</h1></body></html>");
  },
  portal: (_req, res) => {
    res.writeHead(200, { "content-type": "text/html" }).end("<html><body>Sign in to the Wi-Fi</body></html>");
  },
  "not-envelope": (_req, res) => {
    res.writeHead(500, { "content-type": "application/json", "x-request-id": "edge-42" }).end('{"error":"boom"}');
  },
  reset: (_req, res) => {
    res.writeHead(200, { "content-type": "application/json", "content-length": "1000" });
    res.write('{"articles":[');
    setTimeout(() => res.socket?.destroy(), 20);
  },
};

/** A Node server in front of `target`: Vellum mounted under `/cms` (as a host app would), and broken proxies. */
export async function startFront(target: RunningVellum): Promise<Front> {
  const server: Server = createServer((req, res) => {
    const [, first = "", ...rest] = (req.url ?? "/").split("/");
    if (first === "cms") {
      req.url = `/${rest.join("/")}`;
      target.vellum.handler(req, res);
      return;
    }
    (broken[first] ?? broken.gateway!)(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface Recorded {
  method: string;
  url: URL;
  headers: Headers;
  credentials: RequestCredentials | undefined;
}

/** `inner` (the global `fetch` by default), recording every request the client makes. */
export function recordingFetch(inner: typeof fetch = fetch): {
  fetch: typeof fetch;
  requests: Recorded[];
  paths(): string[];
} {
  const requests: Recorded[] = [];
  return {
    requests,
    paths: () => requests.map((r) => `${r.method} ${r.url.pathname}${r.url.search}`),
    fetch: (input, init) => {
      const url = new URL(input instanceof Request ? input.url : input);
      const headers = new Headers(init?.headers);
      requests.push({ method: init?.method ?? "GET", url, headers, credentials: init?.credentials });
      return inner(input, init);
    },
  };
}

/**
 * A browser's `fetch` as far as cookies go: it refuses to let the page set `Cookie` (a forbidden header) and, with
 * `credentials: "include"`, keeps the cookies the server sets and sends them back.
 */
export function browserFetch(): { fetch: typeof fetch; jar: Map<string, string>; pageSetCookie: number } {
  const jar = new Map<string, string>();
  const state = { jar, pageSetCookie: 0, fetch: undefined as unknown as typeof fetch };
  state.fetch = async (input, init) => {
    const headers = new Headers(init?.headers);
    if (headers.has("cookie")) state.pageSetCookie++;
    headers.delete("cookie");
    const include = init?.credentials === "include";
    if (include && jar.size > 0) {
      headers.set("cookie", [...jar].map(([name, value]) => `${name}=${value}`).join("; "));
    }
    const res = await fetch(input, { ...init, headers });
    if (include) {
      for (const line of res.headers.getSetCookie()) {
        const [pair = ""] = line.split(";");
        const at = pair.indexOf("=");
        jar.set(pair.slice(0, at), pair.slice(at + 1));
      }
    }
    return res;
  };
  return state;
}
