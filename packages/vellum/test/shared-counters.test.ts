import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Server, startServer, writeHeadersFor } from "./fuzz-support.js";
import { ARTICLES } from "./support.js";

// Two `vellum serve` processes with SERVICE_REDIS_URL: rate-limit and lockout counters are kept in
// the real Redis that `.ci/run` names in VELLUM_TEST_REDIS_URL, so a client that fails the key on
// both processes is locked out of both once its failures add up (in memory, each process would have
// counted half of them and locked nobody out).

const REDIS_URL = process.env.VELLUM_TEST_REDIS_URL;
if (!REDIS_URL)
  console.warn("[redis] skipping the shared counters test: VELLUM_TEST_REDIS_URL is not set (.ci/run sets it)");

const API_KEY = "shared-counters-api-key-0123456789";
/** A database of its own, so the lockout of 127.0.0.1 meets nothing another run left. */
const DB = 9;

const write = (url: string, key: string) =>
  fetch(`${url}${ARTICLES}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ title: "x", content: "<p>x</p>" }),
  });

describe.skipIf(!REDIS_URL)("two vellum serve processes counting in Redis", () => {
  let dir: string;
  let redis: Redis;
  let redisUrl: string;
  const servers: Server[] = [];

  const clear = async () => {
    const keys = await redis.keys("vellum:*");
    if (keys.length > 0) await redis.del(...keys);
  };

  beforeAll(async () => {
    const url = new URL(REDIS_URL as string);
    url.pathname = `/${DB}`;
    redisUrl = url.toString();
    redis = new Redis(redisUrl);
    await clear();
    dir = await mkdtemp(join(tmpdir(), "vellum-counters-"));
    const env = { SERVICE_DATA_DIR: join(dir, "data"), SERVICE_API_KEY: API_KEY, SERVICE_REDIS_URL: redisUrl };
    servers.push(await startServer(dir, env));
    servers.push(await startServer(dir, env));
  });

  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()));
    await clear();
    redis.disconnect();
    await rm(dir, { recursive: true, force: true });
  });

  it("locks a client out of every process once its failed keys on all of them add up", async () => {
    const [a, b] = servers.map((server) => server.url) as [string, string];
    const security = async (url: string) =>
      (await (await fetch(`${url}/health/security`)).json()) as {
        status: string;
        checks: { lockouts_active: number; counter_store: { kind: string; shared: boolean; state: string } };
      };
    expect((await security(a)).checks.counter_store).toEqual({ kind: "redis", shared: true, state: "ok" });
    const dependencies = (await (await fetch(`${a}/health/dependencies`)).json()) as {
      dependencies: { counters: unknown };
    };
    expect(dependencies.dependencies.counters).toEqual({ status: "ok", kind: "redis" });
    // Nine wrong keys, spread over both processes: not locked out yet (the default is ten).
    for (let n = 0; n < 9; n++) expect((await write(n % 2 ? a : b, "wrong-key-0123456789abcdefgh")).status).toBe(401);
    expect((await security(b)).checks.lockouts_active).toBe(0);
    expect((await write(a, "wrong-key-0123456789abcdefgh")).status).toBe(401);
    for (const url of [a, b]) {
      const locked = await write(url, API_KEY);
      expect(locked.status).toBe(429);
      expect(((await locked.json()) as { error: { code: string } }).error.code).toBe("locked_out");
      expect(Number(locked.headers.get("retry-after"))).toBeGreaterThan(800);
      const view = await security(url);
      expect(view.checks.lockouts_active).toBe(1);
      expect(view.status).toBe("ok");
    }
  });
});

describe("a vellum serve whose Redis does not answer", () => {
  let dir: string;
  let server: Server;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "vellum-counters-down-"));
    // Port 1 on this host: nothing listens, every connection is refused.
    const env = {
      SERVICE_DATA_DIR: join(dir, "data"),
      SERVICE_API_KEY: API_KEY,
      SERVICE_REDIS_URL: "redis://127.0.0.1:1",
    };
    server = await startServer(dir, env);
  });

  afterAll(async () => {
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("serves, counts on its own, and says so in /health, /health/dependencies and the admin banner's line", async () => {
    const create = await fetch(`${server.url}${ARTICLES}`, {
      method: "POST",
      headers: await writeHeadersFor(server.url, API_KEY),
      body: JSON.stringify({ title: "Counted here", slug: "counted-here", content: "<p>x</p>" }),
    });
    expect(create.status).toBe(202);
    const dependencies = (await (await fetch(`${server.url}/health/dependencies`)).json()) as {
      status: string;
      dependencies: { counters: { status: string; kind: string; detail: string; summary: string } };
    };
    expect(dependencies.status).toBe("degraded");
    expect(dependencies.dependencies.counters).toMatchObject({
      status: "degraded",
      kind: "redis",
      summary: "redis does not answer; each process counts on its own",
    });
    expect(dependencies.dependencies.counters.detail).toContain("127.0.0.1:1");
    const health = (await (await fetch(`${server.url}/health`)).json()) as { components: Record<string, string> };
    expect(health.components.counters).toBe("degraded");
    // Still ready: requests are served and counted, per process.
    expect((await fetch(`${server.url}/health/ready`)).status).toBe(200);
  });
});
