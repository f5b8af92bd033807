import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { SecurityConfig } from "../src/config.js";
import { definePlugin } from "../src/index.js";
import { isLoopback } from "../src/security/client-ip.js";
import { compileTrustProxy, describeTrustProxy } from "../src/security/trust-proxy.js";
import { createTestVellum, type TestVellum } from "../src/testing/index.js";
import { probePlugin } from "./fixtures/probe-plugin.js";

/** Answers with the client IP as the kernel sees it (the one `/metrics` and the limits use). */
const whoami = definePlugin({
  name: "whoami",
  setup(ctx) {
    ctx.router.get("/api/v1/whoami", (event) => ({ ip: ctx.kernel.clientIp(event) }));
  },
});

let t: TestVellum | undefined;
let server: Server | undefined;
afterEach(async () => {
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  server = undefined;
  await t?.close();
  t = undefined;
});

const boot = async (trustProxy: SecurityConfig["trustProxy"]) => {
  t = await createTestVellum({ plugins: [whoami(), probePlugin()], config: { security: { trustProxy } } });
  return t;
};

async function ipOf(clientAddress: string, forwarded?: string): Promise<string> {
  const headers = forwarded === undefined ? undefined : { "x-forwarded-for": forwarded };
  const res = await t!.fetch("/api/v1/whoami", { clientAddress, headers });
  expect(res.status).toBe(200);
  return ((await res.json()) as { ip: string }).ip;
}

/** Four requests to the probe route limited to 3 per client IP; the statuses. */
async function limitedStatuses(clientAddress: string, forwarded: (i: number) => string): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < 4; i++) {
    const res = await t!.fetch("/api/v1/limited", { clientAddress, headers: { "x-forwarded-for": forwarded(i) } });
    statuses.push(res.status);
  }
  return statuses;
}

describe("a client that reaches the port directly", () => {
  it.each([[true], ["loopback"], [["loopback", "uniquelocal"]], ["10.0.0.0/8"]] as const)(
    "cannot pass as loopback by sending X-Forwarded-For (trustProxy %j)",
    async (trustProxy) => {
      await boot(trustProxy);
      const ip = await ipOf("203.0.113.9", "127.0.0.1");
      expect(ip).toBe("203.0.113.9");
      expect(isLoopback(ip)).toBe(false);
      expect(await ipOf("203.0.113.9", "10.0.0.1, 127.0.0.1")).toBe("203.0.113.9");
    },
  );

  it("cannot escape the rate limit by rotating X-Forwarded-For (trustProxy true)", async () => {
    await boot(true);
    expect(await limitedStatuses("203.0.113.9", (i) => `198.51.100.${i}`)).toEqual([200, 200, 200, 429]);
  });
});

describe("a trusted proxy", () => {
  it("on loopback (`true` = `loopback`): its forwarded client is used, a forged left part is not", async () => {
    await boot(true);
    expect(await ipOf("127.0.0.1", "198.51.100.4")).toBe("198.51.100.4");
    expect(await ipOf("::1", "2001:db8::42")).toBe("2001:db8::42");
    expect(await ipOf("::ffff:127.0.0.1", "198.51.100.5")).toBe("198.51.100.5");
    expect(await ipOf("127.0.0.1", "127.0.0.1, 198.51.100.4")).toBe("198.51.100.4");
    expect(await ipOf("127.0.0.1")).toBe("127.0.0.1");
    expect(await ipOf("127.0.0.1", "127.0.0.1")).toBe("127.0.0.1");
    // A second proxy in the chain that is not trusted is the client.
    expect(await ipOf("127.0.0.1", "198.51.100.4, 10.0.0.2")).toBe("10.0.0.2");
    expect(await limitedStatuses("127.0.0.1", (i) => `198.51.100.${i}`)).toEqual([200, 200, 200, 200]);
  });

  it("named by a CIDR list: only those peers, walked from the right while each hop is trusted", async () => {
    await boot("loopback, 10.0.0.0/8, 2001:DB8::/32");
    expect(await ipOf("10.1.2.3", "192.0.2.1")).toBe("192.0.2.1");
    expect(await ipOf("2001:db8::5", "192.0.2.2")).toBe("192.0.2.2");
    expect(await ipOf("127.0.0.1", "198.51.100.4, 10.0.0.2")).toBe("198.51.100.4");
    expect(await ipOf("10.0.0.3", "198.51.100.9, 192.0.2.1, 10.0.0.2")).toBe("192.0.2.1");
    expect(await ipOf("192.0.2.99", "192.0.2.3")).toBe("192.0.2.99");
    expect(await ipOf("2001:db9::1", "192.0.2.3")).toBe("2001:db9::1");
  });

  it("named by single addresses in an array", async () => {
    await boot(["192.0.2.50", "2001:db8::7"]);
    expect(await ipOf("192.0.2.50", "198.51.100.1")).toBe("198.51.100.1");
    expect(await ipOf("2001:db8::7", "198.51.100.2")).toBe("198.51.100.2");
    expect(await ipOf("192.0.2.51", "198.51.100.1")).toBe("192.0.2.51");
  });
});

describe("hop counts (Express's `trust proxy` number)", () => {
  it("take the n-th address from the right, counting the socket peer", async () => {
    await boot(1);
    expect(await ipOf("203.0.113.9", "6.6.6.6, 198.51.100.1")).toBe("198.51.100.1");
    expect(await ipOf("203.0.113.9")).toBe("203.0.113.9");
    expect(await limitedStatuses("203.0.113.9", (i) => `6.6.6.${i}, 198.51.100.1`)).toEqual([200, 200, 200, 429]);
    await t!.close();
    await boot(2);
    expect(await ipOf("203.0.113.9", "6.6.6.6, 198.51.100.1")).toBe("6.6.6.6");
    expect(await ipOf("203.0.113.9", "5.5.5.5, 6.6.6.6, 198.51.100.1")).toBe("6.6.6.6");
    await t!.close();
    await boot(3);
    expect(await ipOf("203.0.113.9", "6.6.6.6, 198.51.100.1")).toBe("6.6.6.6");
  });

  it("`0` and `false` use the socket address", async () => {
    for (const trustProxy of [0, false, [] as string[]]) {
      await boot(trustProxy);
      expect(await ipOf("203.0.113.9", "198.51.100.1")).toBe("203.0.113.9");
      await t!.close();
      t = undefined;
    }
  });
});

describe("junk in X-Forwarded-For", () => {
  const junk = "x".repeat(12 * 1024);

  it("is never a client IP: the peer or the last trusted hop is used", async () => {
    await boot(1);
    expect(await ipOf("203.0.113.9", junk)).toBe("203.0.113.9");
    expect(await ipOf("203.0.113.9", `198.51.100.1, ${junk}`)).toBe("203.0.113.9");
    expect(await ipOf("203.0.113.9", "198.51.100.1:4444")).toBe("203.0.113.9");
    expect(await ipOf("203.0.113.9", "198.51.100.1,")).toBe("203.0.113.9");
    await t!.close();
    await boot(2);
    expect(await ipOf("203.0.113.9", `${junk}, 198.51.100.1`)).toBe("198.51.100.1");
    await t!.close();
    await boot("loopback");
    expect(await ipOf("127.0.0.1", junk)).toBe("127.0.0.1");
    expect(await ipOf("127.0.0.1", `198.51.100.4, ${junk}`)).toBe("127.0.0.1");
    expect(await ipOf("127.0.0.1", `${"junk,".repeat(2000)}198.51.100.4`)).toBe("198.51.100.4");
    expect(await ipOf("127.0.0.1", `${junk}, 127.0.0.2`)).toBe("127.0.0.2");
  });

  it("does not open a new rate-limit bucket per junk value", async () => {
    await boot(1);
    expect(await limitedStatuses("203.0.113.9", (i) => `${junk}${i}`)).toEqual([200, 200, 200, 429]);
  });
});

describe("over a real socket", () => {
  const serve = async (trustProxy: SecurityConfig["trustProxy"]) => {
    await boot(trustProxy);
    server = createServer(t!.vellum.handler);
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };
  const ipAt = async (base: string, forwarded: string) =>
    (
      (await (await fetch(`${base}/api/v1/whoami`, { headers: { "x-forwarded-for": forwarded } })).json()) as {
        ip: string;
      }
    ).ip;

  it("believes a loopback peer only when loopback is trusted", async () => {
    let base = await serve("loopback");
    expect(await ipAt(base, "198.51.100.7")).toBe("198.51.100.7");
    await new Promise((r) => server!.close(r));
    server = undefined;
    await t!.close();
    base = await serve("10.0.0.0/8");
    expect(await ipAt(base, "198.51.100.7")).toBe("127.0.0.1");
  });
});

describe("the setting", () => {
  it("has a plain form: `true` is loopback, lists are trimmed and lower-cased", () => {
    expect(describeTrustProxy(undefined)).toBe(false);
    expect(describeTrustProxy(false)).toBe(false);
    expect(describeTrustProxy(0)).toBe(false);
    expect(describeTrustProxy(true)).toEqual(["loopback"]);
    expect(describeTrustProxy(2)).toBe(2);
    expect(describeTrustProxy(" Loopback , 10.0.0.0/8,,2001:db8::/32 ")).toEqual([
      "loopback",
      "10.0.0.0/8",
      "2001:db8::/32",
    ]);
    expect(describeTrustProxy([])).toBe(false);
    expect(compileTrustProxy(["uniquelocal"]).description).toEqual(["uniquelocal"]);
  });

  it.each([["sometimes"], ["10.0.0.0/0"], ["10.0.0.0/33"], ["10.0.0.0/255.0.0.0"], ["fe80::1%eth0"], [-1], [1.5]])(
    "refuses %j with VELLUM_CONFIG_INVALID naming security.trustProxy",
    (setting) => {
      expect(() => compileTrustProxy(setting)).toThrow(/security\.trustProxy/);
      try {
        compileTrustProxy(setting);
      } catch (error) {
        expect((error as { code?: string }).code).toBe("VELLUM_CONFIG_INVALID");
      }
    },
  );

  it("compiled trust follows proxy-addr: IPv4-mapped peers match IPv4 ranges", () => {
    const trust = compileTrustProxy("loopback, 10.0.0.0/8");
    expect(trust.trusts("::ffff:10.1.1.1", 0)).toBe(true);
    expect(trust.trusts("::1", 3)).toBe(true);
    expect(trust.trusts("11.0.0.1", 0)).toBe(false);
    expect(trust.trusts("not-an-ip", 0)).toBe(false);
    const hops = compileTrustProxy(2);
    expect([hops.trusts("203.0.113.9", 0), hops.trusts("x", 1), hops.trusts("127.0.0.1", 2)]).toEqual([
      true,
      true,
      false,
    ]);
  });
});
