import { afterEach, describe, expect, it } from "vitest";
import { definePlugin, type KernelInfo } from "../src/index.js";
import { LockoutTracker } from "../src/security/lockout.js";
import { rateKey } from "../src/security/rate-key.js";
import { DEFAULT_MAX_ENTRIES, MemoryRateLimitStore, takeToken } from "../src/security/rate-limit.js";
import { createTestVellum, type TestVellum } from "../src/testing/index.js";
import { probePlugin } from "./fixtures/probe-plugin.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The `i`-th of many distinct clients: IPv4 addresses and IPv6 addresses in distinct /64s, alternating. */
const client = (i: number) =>
  i % 2 === 0
    ? `198.${(i >> 17) & 255}.${(i >> 9) & 255}.${(i >> 1) & 255}`
    : `2001:db8:${((i >> 16) & 0xffff).toString(16)}:${(i & 0xffff).toString(16)}::1`;

const stores: MemoryRateLimitStore[] = [];
const memoryStore = (options?: ConstructorParameters<typeof MemoryRateLimitStore>[0]) => {
  const store = new MemoryRateLimitStore(options);
  stores.push(store);
  return store;
};

let t: TestVellum | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

describe("rateKey", () => {
  it("keeps IPv4 per address and maps IPv4-mapped IPv6 onto it", () => {
    expect(rateKey("203.0.113.7")).toBe("203.0.113.7");
    expect(rateKey("::ffff:203.0.113.7")).toBe("203.0.113.7");
    expect(rateKey("::FFFF:cb00:7107")).toBe("203.0.113.7");
    expect(rateKey("203.0.113.8")).not.toBe(rateKey("203.0.113.7"));
  });

  it("groups IPv6 by /64 in canonical form", () => {
    const key = rateKey("2001:db8::1");
    expect(key).toBe("2001:db8:0:0::/64");
    for (const same of [
      "2001:db8:0:0:ffff::2",
      "2001:DB8:0000:0000:1:2:3:4",
      "2001:db8::ffff:0:0:9",
      "2001:db8::1%eth0",
    ]) {
      expect(rateKey(same)).toBe(key);
    }
    expect(rateKey("2001:db8:0:1::1")).toBe("2001:db8:0:1::/64");
    expect(rateKey("::1")).toBe("0:0:0:0::/64");
    expect(rateKey("64:ff9b::192.0.2.1")).toBe("64:ff9b:0:0::/64");
    expect(rateKey("fe80::1:2:3:4")).toBe("fe80:0:0:0::/64");
  });

  it("passes other strings through, cut to 64 characters", () => {
    expect(rateKey("unknown")).toBe("unknown");
    expect(rateKey("x".repeat(5000))).toHaveLength(64);
  });
});

describe("MemoryRateLimitStore bound", () => {
  it("stays at its bound after 200,000 distinct clients take a token, and keeps an active client's count", async () => {
    const store = memoryStore();
    const rule = { name: "search", limit: 1_000_000, windowMs: 60_000 };
    let hot = 0;
    let refused = 0;
    let largest = 0;
    for (let i = 0; i < 200_000; i++) {
      if (!(await takeToken(store, rule, client(i))).allowed) refused++;
      // One client keeps coming back: it stays recently used, so its counter is never evicted.
      if (i % 1000 === 0) hot = rule.limit - (await takeToken(store, rule, "192.0.2.200")).remaining;
      if (i % 10_000 === 0) largest = Math.max(largest, store.size);
    }
    expect(refused).toBe(0);
    expect(hot).toBe(200);
    expect(largest).toBeLessThanOrEqual(DEFAULT_MAX_ENTRIES);
    expect(store.size).toBe(DEFAULT_MAX_ENTRIES);
    // The oldest idle clients were evicted: their counters restart at zero.
    expect((await takeToken(store, rule, client(0))).remaining).toBe(rule.limit - 1);
  });

  it("bounds counters and flags separately, so a flood of counters cannot evict a lockout", async () => {
    const store = memoryStore({ maxEntries: 100, maxFlags: 10 });
    const lockout = new LockoutTracker(store, { maxFailures: 1 }, () => {});
    await lockout.recordFailure("203.0.113.66");
    for (let i = 0; i < 1000; i++) await takeToken(store, { name: "x", limit: 5, windowMs: 60_000 }, client(i));
    expect(store.size).toBe(100 + 1); // full counters, and the lockout
    expect(await lockout.retryAfterSeconds("203.0.113.66")).toBeGreaterThan(800);
    expect(() => new MemoryRateLimitStore({ maxEntries: 0 })).toThrow(/maxEntries/);
  });

  it("keeps 200,000 distinct X-Forwarded-For clients through trust-proxy under a bound of 1,000, end to end", async () => {
    const store = memoryStore({ maxEntries: 1_000 });
    t = await createTestVellum({
      plugins: [probePlugin()],
      config: { accessLog: false, security: { trustProxy: 1, rateLimitStore: store } },
    });
    const statuses = new Map<number, number>();
    for (let i = 0; i < 200_000; i++) {
      const res = await t.fetch("/api/v1/limited", {
        clientAddress: "10.0.0.1",
        headers: { "x-forwarded-for": client(i) },
      });
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    }
    expect(Object.fromEntries(statuses)).toEqual({ 200: 200_000 });
    expect(store.size).toBe(1_000);
  }, 180_000);
});

describe("IPv6 /64 grouping", () => {
  it("makes addresses in one /64 share one rate-limit budget, end to end", async () => {
    t = await createTestVellum({ plugins: [probePlugin()], config: { accessLog: false, security: { trustProxy: 1 } } });
    const from = (address: string) =>
      t!.fetch("/api/v1/limited", { clientAddress: "10.0.0.1", headers: { "x-forwarded-for": address } });
    for (const address of ["2001:db8:7:7::a", "2001:db8:7:7::b", "2001:db8:7:7:ffff:1:2:3"]) {
      expect((await from(address)).status).toBe(200);
    }
    expect((await from("2001:db8:7:7::c")).status).toBe(429);
    expect((await from("2001:db8:7:8::a")).status).toBe(200);
    // IPv4 stays per address; the IPv4-mapped form is the same client.
    for (let i = 0; i < 3; i++) expect((await from("192.0.2.30")).status).toBe(200);
    expect((await from("::ffff:192.0.2.30")).status).toBe(429);
    expect((await from("192.0.2.31")).status).toBe(200);
  });

  it("locks the whole /64 out after failures spread over its addresses", async () => {
    let kernel: KernelInfo | undefined;
    const peek = definePlugin({
      name: "peek",
      setup(ctx) {
        kernel = ctx.kernel;
      },
    });
    t = await createTestVellum({
      plugins: [probePlugin(), peek()],
      config: { accessLog: false, security: { trustProxy: 1, lockout: { maxFailures: 3 } } },
    });
    const good = await t.writeHeaders();
    const wrong = { ...good, authorization: "Bearer not-the-key-not-the-key-xx" };
    const echo = (headers: Record<string, string>, address: string) =>
      t!.fetch("/api/v1/echo", {
        method: "POST",
        json: {},
        clientAddress: "10.0.0.1",
        headers: { ...headers, "x-forwarded-for": address },
      });
    expect(await kernel!.security.activeLockouts()).toBe(0);
    for (const address of ["2001:db8:5:5::1", "2001:db8:5:5::2", "2001:db8:5:5:abcd::3"]) {
      expect((await echo(wrong, address)).status).toBe(401);
    }
    expect((await echo(good, "2001:db8:5:5::99")).status).toBe(429);
    expect((await echo(good, "2001:db8:5:6::1")).status).toBe(200);
    expect(await kernel!.security.activeLockouts()).toBe(1);
  });
});

describe("active lockout count", () => {
  it("follows lockouts as they start, are renewed, expire, get deleted and get evicted, without walking the store", async () => {
    const store = memoryStore({ maxFlags: 3 });
    let started = 0;
    const lockout = new LockoutTracker(store, { maxFailures: 1, durationMs: 60_000 }, () => started++);
    const short = new LockoutTracker(store, { maxFailures: 1, durationMs: 30 }, () => started++);
    expect(await lockout.active()).toBe(0);

    await lockout.recordFailure("203.0.113.1");
    await lockout.recordFailure("2001:db8:1:1::1");
    expect(await lockout.active()).toBe(2);
    // A second lockout of the same client (another address in its /64) replaces the first.
    await lockout.recordFailure("2001:db8:1:1::2");
    expect(await lockout.active()).toBe(2);

    // Expiry: the flag's own timer drops it, no read needed.
    await short.recordFailure("203.0.113.2");
    expect(await lockout.active()).toBe(3);
    // The timer fires after 30 ms; on a loaded machine later, so wait for it (bounded).
    for (let i = 0; i < 100 && (await lockout.active()) !== 2; i++) await sleep(20);
    expect(await lockout.active()).toBe(2);
    expect(await short.retryAfterSeconds("203.0.113.2")).toBe(0);

    // Eviction past maxFlags (3): the least recently used lockout goes, the count follows.
    expect(await lockout.retryAfterSeconds("203.0.113.1")).toBeGreaterThan(0); // keeps it hot
    await lockout.recordFailure("203.0.113.3");
    await lockout.recordFailure("203.0.113.4");
    expect(await lockout.active()).toBe(3);
    expect(await lockout.retryAfterSeconds("2001:db8:1:1::3")).toBe(0); // evicted
    expect(await lockout.retryAfterSeconds("203.0.113.1")).toBeGreaterThan(0);

    await store.delete("lock:203.0.113.4");
    expect(await lockout.active()).toBe(2);
    expect(await store.countFlags("lock:203.0.113.")).toBe(2); // a non-namespace prefix still works
    await store.close();
    expect(await lockout.active()).toBe(0);
    expect(started).toBe(6);
  });

  it("restarts an expired counter and ignores a zero TTL", async () => {
    const store = memoryStore();
    expect((await store.increment("rl:x:a", 30)).count).toBe(1);
    expect((await store.increment("rl:x:a", 30)).count).toBe(2);
    await sleep(50);
    expect((await store.increment("rl:x:a", 30)).count).toBe(1);
    await store.setFlag("lock:a", 0);
    expect(await store.getFlag("lock:a")).toBeUndefined();
    expect(await store.countFlags("lock:")).toBe(0);
  });
});
