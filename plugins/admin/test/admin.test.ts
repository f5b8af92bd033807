import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { definePlugin, json } from "@vellum/core";
import { createTestVellum, TEST_API_KEY, type TestVellum } from "@vellum/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { admin } from "../src/index.js";

// The admin plugin's routes on a real instance: the page and its policy, the built files, the key
// check; and the UI's size against its budget. What the UI does in a browser is tested in
// packages/vellum/test/admin-ui.test.ts.

const manifest = JSON.parse(readFileSync(new URL("../dist/ui/manifest.json", import.meta.url), "utf8")) as {
  script: string;
  style: string;
  icon: string;
};
/** The roadmap's budget for the whole UI a browser downloads, gzipped. */
const BUDGET_BYTES = 50 * 1024;

/** A plugin with routes that do and do not qualify as operator actions. */
const tools = definePlugin({
  name: "tools",
  setup(ctx) {
    const done = () => json({ done: true });
    const key = { auth: "key", csrf: false } as const;
    ctx.router.post("/admin/tools/flush", done, { ...key, action: { label: "Flush", component: "tools" } });
    ctx.router.post("/api/v1/tools/sweep", done, {
      action: { label: "Sweep", confirm: "Sweep everything?" },
      schema: { summary: "Sweeps", response: {} },
    });
    ctx.router.post("/admin/tools/:id/redo", done, { ...key, action: { label: "Redo one" } });
    ctx.router.post("/admin/tools/beta", done, { ...key, feature: "beta", action: { label: "Beta" } });
    ctx.router.get("/tools/open", done, { action: { label: "Open to anyone" } });
  },
});

let t: TestVellum;
beforeAll(async () => {
  t = await createTestVellum({ plugins: [admin(), tools()] });
});
afterAll(async () => {
  await t.close();
});

describe("GET /admin", () => {
  it("serves the page with a strict policy, no caching without revalidation, and the CSRF cookie", async () => {
    const res = await t.fetch("/admin");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("no-cache");
    const csp = res.headers.get("content-security-policy") ?? "";
    for (const directive of ["default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'"])
      expect(csp).toContain(directive);
    expect(csp).not.toContain("unsafe");
    expect(res.headers.get("set-cookie")).toMatch(/^svc_csrf=[^;]+; Path=\/; SameSite=Strict/);
    const html = await res.text();
    expect(html).toContain(`<script type="module" src="/admin/assets/${manifest.script}"></script>`);
    expect(html).toContain(`<link rel="stylesheet" href="/admin/assets/${manifest.style}">`);
    expect(html).toContain('<div id="app" data-base="">');
    expect(html).not.toMatch(/<script>|<style>| style=| on\w+=/);
  });

  it("addresses its files and the API under the prefix a host mounted Vellum at", async () => {
    const res = await t.vellum.fetch(new Request("http://host.test/admin"), { mountPrefix: "/cms" });
    const html = await res.text();
    expect(html).toContain(`src="/cms/admin/assets/${manifest.script}"`);
    expect(html).toContain('<div id="app" data-base="/cms">');
  });
});

describe("GET /admin/assets/:file", () => {
  it("serves the built files gzipped when the client accepts it, for a year", async () => {
    for (const [name, type] of [
      [manifest.script, "text/javascript; charset=utf-8"],
      [manifest.style, "text/css; charset=utf-8"],
    ] as const) {
      const raw = readFileSync(new URL(`../dist/ui/${name}`, import.meta.url));
      const plain = await t.fetch(`/admin/assets/${name}`, { headers: { "accept-encoding": "identity" } });
      expect(plain.headers.get("content-type")).toBe(type);
      expect(plain.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect(plain.headers.get("content-encoding")).toBeNull();
      expect(Buffer.from(await plain.arrayBuffer()).equals(raw)).toBe(true);
      const gzipped = await t.vellum.fetch(
        new Request(`http://host.test/admin/assets/${name}`, { headers: { "accept-encoding": "gzip, br" } }),
      );
      expect(gzipped.headers.get("content-encoding")).toBe("gzip");
      expect(gzipped.headers.get("vary")).toBe("accept-encoding");
    }
    const icon = await t.fetch(`/admin/assets/${manifest.icon}`);
    expect(icon.headers.get("content-type")).toBe("image/svg+xml");
  });

  it("answers 404 in the error envelope for any other name", async () => {
    for (const name of ["app.js", "manifest.json", "..%2Fpackage.json", manifest.script.replace(".js", ".map")]) {
      const res = await t.fetch(`/admin/assets/${name}`);
      expect(res.status).toBe(404);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("not_found");
    }
  });

  it("keeps what a browser downloads for the UI within 50 KB gzipped", async () => {
    const page = await (await t.fetch("/admin")).text();
    const files = [manifest.script, manifest.style, manifest.icon].map((name) =>
      readFileSync(new URL(`../dist/ui/${name}`, import.meta.url)),
    );
    const gzipped = [Buffer.from(page), ...files].reduce((sum, file) => sum + gzipSync(file, { level: 9 }).length, 0);
    expect(gzipped).toBeLessThanOrEqual(BUDGET_BYTES);
  });
});

describe("GET /admin/key-check", () => {
  it("answers 200 to the right key, 401 to a wrong or missing one, and locks out a guesser", async () => {
    expect((await t.fetch("/admin/key-check")).status).toBe(401);
    const right = await t.fetch("/admin/key-check", { headers: { authorization: `Bearer ${TEST_API_KEY}` } });
    expect(right.status).toBe(200);
    expect(await right.json()).toEqual({ valid: true });
    // Contract §4: ten wrong keys from one address lock it out, even with the right key after.
    const guesser = { clientAddress: "10.9.8.7" };
    for (let i = 0; i < 10; i++) {
      const wrong = await t.fetch("/admin/key-check", {
        ...guesser,
        headers: { authorization: `Bearer wrong-key-${i}-0123456789abcdefgh` },
      });
      expect(wrong.status).toBe(401);
    }
    const locked = await t.fetch("/admin/key-check", {
      ...guesser,
      headers: { authorization: `Bearer ${TEST_API_KEY}` },
    });
    expect(locked.status).toBe(429);
    expect(((await locked.json()) as { error: { code: string } }).error.code).toBe("locked_out");
  });
});

describe("GET /admin/actions", () => {
  it("lists the keyed routes without path parameters that declare an action, with the key only", async () => {
    expect((await t.fetch("/admin/actions")).status).toBe(401);
    const res = await t.fetch("/admin/actions", { headers: { authorization: `Bearer ${TEST_API_KEY}` } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      actions: [
        {
          method: "POST",
          path: "/admin/tools/flush",
          label: "Flush",
          component: "tools",
          confirm: null,
          csrf: false,
          summary: null,
        },
        {
          method: "POST",
          path: "/api/v1/tools/sweep",
          label: "Sweep",
          component: null,
          confirm: "Sweep everything?",
          csrf: true,
          summary: "Sweeps",
        },
      ],
    });
  });
});

describe("ADMIN_OFF", () => {
  it("leaves the page and every admin route out", async () => {
    const off = await createTestVellum({ plugins: [admin({ off: true })] });
    try {
      for (const path of ["/admin", `/admin/assets/${manifest.script}`, "/admin/key-check", "/admin/actions"]) {
        const res = await off.fetch(path, { headers: { authorization: `Bearer ${TEST_API_KEY}` } });
        expect(res.status, path).toBe(404);
      }
    } finally {
      await off.close();
    }
  });
});
