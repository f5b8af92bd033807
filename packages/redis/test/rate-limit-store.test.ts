import { randomBytes } from "node:crypto";
import { createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import type { RateLimitStoreStatus } from "@vellum/core";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { RedisRateLimitStore, type RedisRateLimitStoreOptions } from "../src/index.js";

// The Redis counter store against the real Redis that `.ci/run` names in VELLUM_TEST_REDIS_URL.
// Each store instance stands for one process of a deployment; a test's keys carry a prefix of their own.

const REDIS_URL = process.env.VELLUM_TEST_REDIS_URL;
if (!REDIS_URL)
  console.warn("[redis] skipping the Redis store tests: VELLUM_TEST_REDIS_URL is not set (.ci/run sets it)");

const stores: RedisRateLimitStore[] = [];
const clients: Redis[] = [];
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close()));
  await Promise.all(clients.splice(0).map((client) => client.quit()));
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

/** A plain client on `url`, to look at the keys a store wrote; closed after the test. */
function clientOf(url: string) {
  const client = new Redis(url);
  clients.push(client);
  return client;
}

const newPrefix = () => `vellum-test:${randomBytes(6).toString("hex")}:`;

/**
 * A TCP relay to Redis that the test can cut and restore (Redis going away and coming back), or
 * make hang and answer again: while it hangs, its connections stay open and swallow what they get,
 * and new ones are accepted the same way, like a Redis that stopped (SIGSTOP) or a network that
 * drops packets.
 */
async function relayTo(target: string) {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  const pairs = new Map<Socket, Socket>();
  let hanging = false;
  /** What the connections swallowed while the relay hung. */
  let swallowed = "";
  const { connect } = await import("node:net");
  const listen = (server: Server, at: number) =>
    new Promise<number>((resolve) =>
      server.listen(at, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)),
    );
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  };
  const swallow = (client: Socket) => {
    pairs.delete(client);
    client.on("data", (chunk: Buffer) => (swallowed += chunk.toString("latin1")));
    client.resume();
  };
  const serve = () => {
    const server = createServer((client) => {
      track(client);
      if (hanging) return swallow(client);
      const upstream = connect(Number(port || 6379), hostname);
      track(upstream);
      pairs.set(client, upstream);
      client.on("close", () => pairs.delete(client));
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
    hang() {
      hanging = true;
      for (const [client, upstream] of pairs) {
        upstream.unpipe(client);
        client.unpipe(upstream);
        upstream.destroy();
        swallow(client);
      }
    },
    answer() {
      hanging = false;
    },
    /** Everything sent to it while it hung. */
    swallowed: () => swallowed,
  };
}

describe.skipIf(!REDIS_URL)("RedisRateLimitStore", () => {
  const url = REDIS_URL as string;

  it("counts a client together across processes, in fixed windows", async () => {
    const prefix = newPrefix();
    const a = storeOf(url, prefix);
    const b = storeOf(url, prefix);
    await Promise.all([a.connected(), b.connected()]);
    // A window of seconds, so that the calls below land in it even on a loaded machine.
    const first = await a.increment("rl:search:203.0.113.7", 2_000);
    expect(first.count).toBe(1);
    expect(first.resetAt).toBeGreaterThan(Date.now());
    expect(first.resetAt).toBeLessThanOrEqual(Date.now() + 2_000);
    expect((await b.increment("rl:search:203.0.113.7", 2_000)).count).toBe(2);
    expect((await a.increment("rl:search:203.0.113.7", 2_000)).count).toBe(3);
    expect((await b.increment("rl:search:198.51.100.1", 2_000)).count).toBe(1);
    // Redis expired the key no later than `resetAt` (it started the window before answering).
    await sleep(first.resetAt - Date.now() + 50);
    expect((await b.increment("rl:search:203.0.113.7", 2_000)).count).toBe(1);
    expect(a.status()).toEqual({ kind: "redis", shared: true, state: "ok" });
  });

  it("shares lockout flags: set by one process, seen, counted and removed by another, gone when they expire", async () => {
    const prefix = newPrefix();
    const a = storeOf(url, prefix);
    const b = storeOf(url, prefix);
    await Promise.all([a.connected(), b.connected()]);
    await a.setFlag("lock:203.0.113.7", 60_000);
    await a.setFlag("lock:198.51.100.1", 2_000);
    const shortOneGone = Date.now() + 2_000;
    const until = await b.getFlag("lock:203.0.113.7");
    expect(until).toBeGreaterThan(Date.now() + 59_000);
    expect(await b.countFlags("lock:")).toBe(2);
    expect(await b.countFlags("lock:198.")).toBe(1);
    await sleep(shortOneGone - Date.now() + 50);
    expect(await b.getFlag("lock:198.51.100.1")).toBeUndefined();
    expect(await a.countFlags("lock:")).toBe(1);
    await b.delete("lock:203.0.113.7");
    expect(await a.getFlag("lock:203.0.113.7")).toBeUndefined();
    expect(await a.countFlags("lock:")).toBe(0);
    await a.setFlag("lock:192.0.2.9", 0);
    expect(await a.getFlag("lock:192.0.2.9")).toBeUndefined();
  });

  it("drops expired lockouts from the namespace's set when it sets one, not only when it counts them", async () => {
    const prefix = newPrefix();
    const store = storeOf(url, prefix);
    await store.connected();
    // The set lives as long as its longest lockout, so steady lockouts would keep it forever.
    await store.setFlag("lock:203.0.113.7", 60_000);
    await store.setFlag("lock:198.51.100.1", 50);
    await sleep(100);
    await store.setFlag("lock:192.0.2.9", 60_000);
    expect(await clientOf(url).zrange(`${prefix}flags:lock:`, 0, -1)).toEqual([
      `${prefix}lock:203.0.113.7`,
      `${prefix}lock:192.0.2.9`,
    ]);
  });

  it("expires a counter whose window is not a whole number of milliseconds", async () => {
    const prefix = newPrefix();
    const store = storeOf(url, prefix);
    await store.connected();
    expect((await store.increment("rl:search:203.0.113.7", 1_500.5)).count).toBe(1);
    expect(store.status().state).toBe("ok");
    const ttl = await clientOf(url).pttl(`${prefix}rl:search:203.0.113.7`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(1_501);
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

  it("keeps a lockout set in this process while Redis did not answer, once Redis answers again", async () => {
    const relay = await relayTo(url);
    const store = storeOf(relay.url, newPrefix());
    await store.connected();
    await relay.cut();
    await store.setFlag("lock:203.0.113.7", 60_000);
    const local = (await store.getFlag("lock:203.0.113.7")) as number;
    expect(local).toBeGreaterThan(Date.now());

    await relay.restore();
    await waitFor(() => store.status().state === "ok", 10_000);
    expect(await store.getFlag("lock:203.0.113.7")).toBe(local);
    // The later of the two holds; removing the lockout removes both.
    await store.setFlag("lock:203.0.113.7", 120_000);
    expect(await store.getFlag("lock:203.0.113.7")).toBeGreaterThan(local + 50_000);
    await store.delete("lock:203.0.113.7");
    expect(await store.getFlag("lock:203.0.113.7")).toBeUndefined();
  });

  it("while Redis hangs, makes one call wait the command timeout and answers the next ones at once, until Redis answers again", async () => {
    const relay = await relayTo(url);
    const prefix = newPrefix();
    const changes: RateLimitStoreStatus[] = [];
    const store = storeOf(relay.url, prefix, { onStateChange: (status) => changes.push(status) });
    await store.connected();
    expect((await store.increment("rl:search:203.0.113.7", 60_000)).count).toBe(1);

    relay.hang();
    // This call waits the 250 ms command timeout, then counts in this process.
    expect((await store.increment("rl:search:203.0.113.7", 60_000)).count).toBe(1);
    expect(store.status().state).toBe("degraded");
    expect(relay.swallowed()).toContain("rl:search:203.0.113.7");
    const sent = relay.swallowed().length;
    for (let count = 2; count <= 21; count++)
      expect((await store.increment("rl:search:203.0.113.7", 60_000)).count).toBe(count);
    // None of the twenty was sent to Redis to wait for the timeout (a background PING may have been).
    expect(relay.swallowed().slice(sent)).not.toContain("rl:search");
    expect(changes.map((change) => change.state)).toEqual(["degraded"]);

    relay.answer();
    await waitFor(() => store.status().state === "ok", 10_000);
    expect((await store.increment("rl:search:203.0.113.7", 60_000)).count).toBe(2);
    expect(changes.map((change) => change.state)).toEqual(["degraded", "ok"]);
  });

  it("after Redis refuses a command, counts in this process and tries a command again later, not a PING", async () => {
    const prefix = newPrefix();
    const client = clientOf(url);
    const changes: RateLimitStoreStatus[] = [];
    const store = storeOf(url, prefix, { onStateChange: (status) => changes.push(status) });
    await store.connected();
    // A key of another type: Redis refuses to count it (WRONGTYPE), though it still answers PINGs.
    await client.hset(`${prefix}rl:search:203.0.113.7`, "hits", "1");
    expect((await store.increment("rl:search:203.0.113.7", 60_000)).count).toBe(1);
    expect(store.status()).toMatchObject({
      state: "degraded",
      detail: expect.stringMatching(/refused a command \(WRONGTYPE/),
    });
    // Until a retry is due (1 s), nothing goes to Redis.
    expect((await store.increment("rl:search:198.51.100.1", 60_000)).count).toBe(1);
    expect(await client.exists(`${prefix}rl:search:198.51.100.1`)).toBe(0);
    // A PING would be answered: the store stays degraded, since no command went through.
    await sleep(1_300);
    expect(store.status().state).toBe("degraded");
    // The retry is refused again: still degraded, and the next one waits twice as long (2 s).
    expect((await store.increment("rl:search:203.0.113.7", 60_000)).count).toBe(2);
    expect((await store.increment("rl:search:198.51.100.1", 60_000)).count).toBe(2);
    expect(await client.exists(`${prefix}rl:search:198.51.100.1`)).toBe(0);
    await sleep(2_100);
    // A command that goes through ends it.
    expect((await store.increment("rl:search:198.51.100.1", 60_000)).count).toBe(1);
    expect(store.status().state).toBe("ok");
    expect(await client.get(`${prefix}rl:search:198.51.100.1`)).toBe("1");
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
