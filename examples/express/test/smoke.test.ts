import sharp from "sharp";
import { afterAll, beforeAll, expect, it } from "vitest";
import { API_KEY, type RunningExample, startExample } from "./running-example.js";

let example: RunningExample;
let base: string;

beforeAll(async () => {
  example = await startExample();
  base = example.base;
});

afterAll(() => example.stop());

/** The key, and the CSRF cookie and token a GET of `/cms/api/v1/csrf` hands out. */
async function writeHeaders(): Promise<Record<string, string>> {
  const res = await fetch(`${base}/cms/api/v1/csrf`);
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith("svc_csrf="));
  expect(cookie).toMatch(/; Path=\/cms;/);
  const { token } = (await res.json()) as { token: string };
  return { authorization: `Bearer ${API_KEY}`, cookie: `svc_csrf=${token}`, "x-csrf-token": token };
}

it("lets Vellum answer its routes under /cms and passes the rest to Express", async () => {
  expect(await (await fetch(`${base}/`)).text()).toBe("express home\n");
  expect(await (await fetch(`${base}/elsewhere`)).text()).toBe("express 404\n");
  expect(await (await fetch(`${base}/health/live`)).text()).toBe("express 404\n");
  const live = await fetch(`${base}/cms/health/live`);
  expect(await live.json()).toEqual({ live: true });
  expect(live.headers.get("x-request-id")).toBeTruthy();
});

it("keeps every link it makes under the prefix", async () => {
  const headers = await writeHeaders();
  const created = await fetch(`${base}/cms/api/v1/articles`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
    body: JSON.stringify({ title: "Hello", slug: "hello", content: "<p>Hi</p>" }),
  });
  expect(created.status).toBe(202);
  expect(created.headers.get("location")).toBe("/cms/api/v1/articles/hello");
  const article = await fetch(`${base}${created.headers.get("location")}`);
  expect(((await article.json()) as { title: string }).title).toBe("Hello");

  const png = await sharp({ create: { width: 2, height: 2, channels: 3, background: "#09c" } })
    .png()
    .toBuffer();
  const form = new FormData();
  form.set("file", new Blob([new Uint8Array(png)], { type: "image/png" }), "dot.png");
  const upload = await fetch(`${base}/cms/api/v1/media`, { method: "POST", headers, body: form });
  const { url } = (await upload.json()) as { url: string };
  expect(url).toMatch(/^\/cms\/media\//);
  expect((await fetch(`${base}${url}`)).status).toBe(200);

  const missing = await fetch(`${base}/cms/api/v1/articles/nope`);
  const { error } = (await missing.json()) as { error: { docs: string } };
  expect(error.docs).toBe("/cms/docs/api/errors#not_found");
  expect((await fetch(`${base}${error.docs.split("#")[0]}`)).status).toBe(200);

  const doc = (await (await fetch(`${base}/cms/api/v1/openapi.json`)).json()) as { servers: Array<{ url: string }> };
  expect(doc.servers).toEqual([{ url: "/cms" }]);
});

it("refuses a write without the key", async () => {
  const write = await fetch(`${base}/cms/api/v1/articles`, {
    method: "POST",
    body: "{}",
    headers: { "content-type": "application/json" },
  });
  expect(write.status).toBe(401);
});
