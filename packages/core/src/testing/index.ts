import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createConsola } from "consola";
import type { VellumConfig } from "../config.js";
import type { VellumErrorEvent } from "../hooks/types.js";
import type { AnyVellumPlugin } from "../plugin/define.js";
import { createVellum, type Vellum } from "../vellum.js";

export const TEST_API_KEY = "test-api-key-0123456789abcdef";

export interface TestRequestInit extends RequestInit {
  /** Client address the request appears to come from (default 127.0.0.1). */
  clientAddress?: string;
  /** JSON body; sets Content-Type. */
  json?: unknown;
}

export interface TestVellum {
  vellum: Vellum;
  dataDir: string;
  /** Errors reported on `vellum:error` during the test. */
  errors: VellumErrorEvent[];
  fetch(path: string, init?: TestRequestInit): Promise<Response>;
  /** Headers for a write: bearer key, CSRF cookie and matching header (fetched with a real GET). */
  writeHeaders(extra?: Record<string, string>): Promise<Record<string, string>>;
  close(): Promise<void>;
}

export interface TestVellumOptions {
  plugins?: AnyVellumPlugin[];
  config?: Partial<VellumConfig>;
  /** Reuse a data dir (restart scenarios); it is then not removed on close. */
  dataDir?: string;
  /** Stop after init/migrate instead of going ready. */
  ready?: boolean;
}

/**
 * Boots a real instance on a temporary data dir: real SQLite file, real fs storage, full
 * lifecycle. `close()` shuts it down and removes the directory.
 */
export async function createTestVellum(options: TestVellumOptions = {}): Promise<TestVellum> {
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), "vellum-test-")));
  const vellum = createVellum({
    dataDir,
    plugins: options.plugins ?? [],
    logger: createConsola({ level: 1 }),
    ...options.config,
    security: { apiKey: TEST_API_KEY, ...options.config?.security },
  });
  const errors: VellumErrorEvent[] = [];
  vellum.hooks.hook("vellum:error", (event) => {
    errors.push(event);
  });
  if (options.ready !== false) {
    await vellum.ready().catch(async (error: unknown) => {
      if (!options.dataDir) await rm(dataDir, { recursive: true, force: true });
      throw error;
    });
  }

  const fetch = (path: string, init: TestRequestInit = {}) => {
    const { clientAddress, json, ...rest } = init;
    const headers = new Headers(rest.headers);
    if (json !== undefined) headers.set("content-type", "application/json");
    const body = json !== undefined ? JSON.stringify(json) : rest.body;
    const request = new Request(`http://vellum.test${path}`, { ...rest, headers, body: body ?? null });
    return vellum.fetch(request, { clientAddress: clientAddress ?? "127.0.0.1" });
  };

  let csrfCookie: string | undefined;
  const writeHeaders = async (extra: Record<string, string> = {}) => {
    if (!csrfCookie) {
      const res = await fetch("/docs/api/errors");
      const cookie = res.headers.getSetCookie().find((c) => c.startsWith("svc_csrf="));
      csrfCookie = cookie?.split(";")[0]?.slice("svc_csrf=".length);
      if (!csrfCookie) throw new Error("the service did not set a svc_csrf cookie");
    }
    return {
      authorization: `Bearer ${TEST_API_KEY}`,
      cookie: `svc_csrf=${csrfCookie}`,
      "x-csrf-token": csrfCookie,
      ...extra,
    };
  };

  return {
    vellum,
    dataDir,
    errors,
    fetch,
    writeHeaders,
    async close() {
      await vellum.close();
      if (!options.dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Runs `work` and counts the turns the event loop took meanwhile (`setImmediate` callbacks that
 * ran): 0 when it held the loop until it ended, as one long synchronous statement does.
 */
export async function eventLoopTurns<T>(work: () => Promise<T>): Promise<{ value: T; turns: number }> {
  let turns = 0;
  let spinning = true;
  const spin = () => {
    if (!spinning) return;
    turns++;
    setImmediate(spin);
  };
  setImmediate(spin);
  try {
    return { value: await work(), turns };
  } finally {
    spinning = false;
  }
}
