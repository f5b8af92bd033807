import { randomBytes } from "node:crypto";
import { createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import type { RateLimitStoreStatus } from "@vellum/core";
import { afterEach, describe, expect, it } from "vitest";
import { RedisRateLimitStore, type RedisRateLimitStoreOptions } from "../src/index.js";

// The Redis counter store against the real Redis that `.ci/run` names in VELLUM_TEST_REDIS_URL.
// Each store instance stands for one process of a deployment; a test's keys carry a prefix of their own.

const REDIS_URL = process.env.VELLUM_TEST_REDIS_URL;
if (!REDIS_URL)
  console.warn("[redis] skipping the Redis store tests: VELLUM_TEST_REDIS_URL is not set (.ci/run sets it)");

const stores: RedisRateLimitStore[] = [];
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close()));
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await sleep(20);
  }
}

/** A store on `url` with this test's prefix; closed after the test. */
function storeOf(url: string, prefix: string, options: Partial<RedisRateLimitStoreOptions> = {}) {
  const store = new RedisRateLimitStore({ url, prefix, ...options });
  stores.push(store);
  return store;
}

const newPrefix = () => `vellum-test:${randomBytes(6).toString("hex")}:`;

/** A TCP relay to Redis that the test can cut and restore: Redis going away and coming back. */
async function relayTo(target: string) {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  const { connect } = await import("node:net");
  const listen = (server: Server, at: number) =>
    new Promise<number>((resolve) =>
      server.listen(at, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)),
    );
  const serve = () => {
    const server = createServer((client) => {
      const upstream = connect(Number(port || 6379), hostname);
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on("close", () => sockets.delete(socket));
        socket.on("error", () => socket.destroy());
      }
      client.pipe(upstream).pipe(client);
    });
    servers.push(server);
    return server;
  };
  let server = serve();
  const relayPort = await listen(server, 0);
  return {
    url: `redis://127.0.0.1:${relayPort}`,
    async cut() {
      await new Promise((resolve) => {
        server.close(resolve);
        for (const socket of sockets) socket.destroy();
      });
    },
    async restore() {
      server = serve();
      await listen(server, relayPort);
    },
  };
}

describe.skipIf(!REDIS_URL)("RedisRateLimitStore", () => {
  const url = REDIS_URL as string;

  it("counts a client together across processes, in fixed windows", async () => {
    const prefix = newPrefix();
    const a = storeOf(url, prefix);
    const b = storeOf(url, prefix);
    await Promise.all([a.connected(), b.connected()]);
    const first = await a.increment("rl:search:203.0.113.7", 300);
    expect(first.count).toBe(1);
    expect(first.resetAt).toBeGreaterThan(Date.now());
    expect(first.resetAt).toBeLessThanOrEqual(Date.now() + 300);
    expect((await b.increment("rl:search:203.0.113.7", 300)).count).toBe(2);
    expect((await a.increment("rl:search:203.0.113.7", 300)).count).toBe(3);
    expect((await b.increment("rl:search:198.51.100.1", 300)).count).toBe(1);
    await sleep(350);
    expect((await b.increment("rl:search:203.0.113.7", 300)).count).toBe(1);
    expect(a.status()).toEqual({ kind: "redis", shared: true, state: "ok" });
  });

  it("shares lockout flags: set by one process, seen, counted and removed by another, gone when they expire", async () => {
    const prefix = newPrefix();
    const a = storeOf(url, prefix);
    const b = storeOf(url, prefix);
    await Promise.all([a.connected(), b.connected()]);
    await a.setFlag("lock:203.0.113.7", 60_000);
    await a.setFlag("lock:198.51.100.1", 250);
    const until = await b.getFlag("lock:203.0.113.7");
    expect(until).toBeGreaterThan(Date.now() + 59_000);
    expect(await b.countFlags("lock:")).toBe(2);
    expect(await b.countFlags("lock:198.")).toBe(1);
    await sleep(300);
    expect(await b.getFlag("lock:198.51.100.1")).toBeUndefined();
    expect(await a.countFlags("lock:")).toBe(1);
    await b.delete("lock:203.0.113.7");
    expect(await a.getFlag("lock:203.0.113.7")).toBeUndefined();
    expect(await a.countFlags("lock:")).toBe(0);
    await a.setFlag("lock:192.0.2.9", 0);
    expect(await a.getFlag("lock:192.0.2.9")).toBeUndefined();
  });

  it("counts in this process while Redis does not answer, says so once, and counts together again after", async () => {
    const relay = await relayTo(url);
    const prefix = newPrefix();
    const changes: RateLimitStoreStatus[] = [];
    const store = storeOf(relay.url, prefix, { onStateChange: (status) => changes.push(status) });
    await store.connected();
    expect((await store.increment("authfail:203.0.113.7", 60_000)).count).toBe(1);

    await relay.cut();
    // Every call is answered at once from memory: limits and lockouts keep holding in this process.
    const started = Date.now();
    expect((await store.increment("authfail:203.0.113.7", 60_000)).count).toBe(1);
    expect((await store.increment("authfail:203.0.113.7", 60_000)).count).toBe(2);
    await store.setFlag("lock:203.0.113.7", 60_000);
    expect(await store.getFlag("lock:203.0.113.7")).toBeGreaterThan(Date.now());
    expect(await store.countFlags("lock:")).toBe(1);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(store.status()).toMatchObject({ kind: "redis", state: "degraded" });
    expect(store.status().detail).toMatch(/^Redis at redis:\/\/127\.0\.0\.1:\d+ does not answer/);
    expect(changes.map((change) => change.state)).toEqual(["degraded"]);

    await relay.restore();
    await waitFor(async () => (await store.increment("authfail:203.0.113.7", 60_000)).count === 2);
    expect(store.status().state).toBe("ok");
    expect(changes.map((change) => change.state)).toEqual(["degraded", "ok"]);
  });

  it("never names the password of its URL", async () => {
    const changes: RateLimitStoreStatus[] = [];
    // Nothing listens on port 1: the first call fails over to this process at once.
    const store = storeOf("redis://vellum:hunter2-secret@127.0.0.1:1/0", newPrefix(), {
      onStateChange: (status) => changes.push(status),
    });
    expect((await store.increment("rl:x:1", 1000)).count).toBe(1);
    await waitFor(() => store.status().state === "degraded");
    expect(JSON.stringify([store.status(), changes])).not.toContain("hunter2");
    expect(store.status().detail).toMatch(/^Redis at redis:\/\/127\.0\.0\.1:1\/0 does not answer/);
  });
});
