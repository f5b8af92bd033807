import { type ChildProcess, spawn } from "node:child_process";
import { Agent, request } from "node:http";
import { fileURLToPath } from "node:url";

// Helpers of fuzz.test.ts: the real `vellum serve` as a child process, and raw HTTP/1.1 requests over
// keep-alive sockets (node:http rather than fetch, so paths go out as written: dot segments, malformed
// percent-escapes and raw bytes are not normalised by a URL parser on the client side).

/** The built binary (`npm run build`; the root `npm test` builds first). */
export const BIN = fileURLToPath(new URL("../bin/vellum.mjs", import.meta.url));

export interface Server {
  url: string;
  child: ChildProcess;
  /** The last part of the child's stdout and stderr (bounded), for failure messages. */
  output(): string;
  /** Kills the child (SIGKILL when it does not stop on SIGTERM within 5 s) and waits for it. */
  stop(): Promise<void>;
}

const KEEP_OUTPUT = 64 * 1024;

/**
 * Starts `vellum serve --port 0 --host 127.0.0.1` in `cwd` and resolves once it printed its address.
 * Rejects (and kills the child) when it exits first or `timeoutMs` passes.
 */
export async function startServer(cwd: string, env: NodeJS.ProcessEnv, timeoutMs = 20_000): Promise<Server> {
  const child = spawn(process.execPath, [BIN, "serve", "--port", "0", "--host", "127.0.0.1"], {
    cwd,
    env: { PATH: process.env.PATH, NO_COLOR: "1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const append = (chunk: string) => {
    output += chunk;
    if (output.length > 2 * KEEP_OUTPUT) output = output.slice(-KEEP_OUTPUT);
  };
  child.stdout?.setEncoding("utf8").on("data", append);
  child.stderr?.setEncoding("utf8").on("data", append);
  // Should the test process die without running afterAll, take the server with it.
  const orphan = () => child.kill("SIGKILL");
  process.once("exit", orphan);
  const exited = new Promise<void>((resolve) =>
    child.once("close", () => {
      process.off("exit", orphan);
      resolve();
    }),
  );

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(killer);
    }
  };

  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = /listening on (http:\/\/127\.0\.0\.1:\d+) /.exec(output);
    if (match?.[1]) return { url: match[1], child, output: () => output.slice(-KEEP_OUTPUT), stop };
    const gone = child.exitCode !== null || child.signalCode !== null;
    if (gone || Date.now() > deadline) {
      await stop();
      throw new Error(`vellum serve ${gone ? "exited" : "timed out"} before listening\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export interface RawRequest {
  method: string;
  /** The request target exactly as sent (path and query). */
  target: string;
  headers: Record<string, string>;
  body?: string | undefined;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A pool of keep-alive connections shared by the requests of one run. */
export function keepAliveAgent(maxSockets: number): Agent {
  return new Agent({ keepAlive: true, maxSockets });
}

/** Sends one request and reads the whole response; rejects on a socket error or after `timeoutMs`. */
export function send(base: string, agent: Agent, req: RawRequest, timeoutMs = 15_000): Promise<RawResponse> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...req.headers };
    if (req.body !== undefined) headers["content-length"] = String(Buffer.byteLength(req.body));
    const r = request(
      { host: hostname, port: Number(port), method: req.method, path: req.target, headers, agent },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("error", reject);
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
      },
    );
    r.setTimeout(timeoutMs, () => r.destroy(new Error(`no response within ${timeoutMs} ms`)));
    r.on("error", reject);
    r.end(req.body);
  });
}

/** The headers of a JSON write to the server at `url`: `apiKey`, and a CSRF token it hands out. */
export async function writeHeadersFor(url: string, apiKey: string): Promise<Record<string, string>> {
  const { token } = (await (await fetch(`${url}/api/v1/csrf`)).json()) as { token: string };
  return {
    authorization: `Bearer ${apiKey}`,
    cookie: `svc_csrf=${token}`,
    "x-csrf-token": token,
    "content-type": "application/json",
  };
}
