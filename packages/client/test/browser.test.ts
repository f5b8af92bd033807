import { existsSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, Page } from "playwright-core";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type * as client from "../src/index.js";
import { launchChromium, skipWithoutChromium } from "../../../test-support/chromium.js";
import { API_KEY, PNG, type RunningVellum, startVellum } from "./support.js";

// The client in Chromium: its sources as native ES modules on a page, against a real Vellum mounted on the page's
// own origin under /cms and, cross-origin, on its own port with CORS. The browser keeps the cookie itself.

const skip = skipWithoutChromium("client");

/** `src/<name>.ts` as JavaScript: what a browser loads, with no bundler. */
function moduleSource(name: string): string | undefined {
  const file = new URL(`../src/${name.replace(/\.js$/, ".ts")}`, import.meta.url);
  if (!/^[a-z-]+\.js$/.test(name) || !existsSync(file)) return undefined;
  const options = { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 };
  return ts.transpileModule(readFileSync(file, "utf8"), { compilerOptions: options }).outputText;
}

/** The app's page: it loads the client as a native module and leaves it on `window.vellumClient`. */
const PAGE = `<!doctype html><title>app</title>
<script type="module">import * as client from "/client/index.js"; window.vellumClient = client;</script>`;

/** What `window` holds in the page (`page.evaluate` functions run there and see none of this file's bindings). */
type AppWindow = { vellumClient: typeof client };

let page: Page;
let browser: Browser;
let pages: Server;
let server: RunningVellum;
let origin: string;

beforeAll(async () => {
  if (skip) return;
  let mounted: RunningVellum | undefined;
  pages = createServer((req, res) => {
    const url = req.url ?? "/";
    if (url.startsWith("/cms/") && mounted) {
      req.url = url.slice("/cms".length);
      return mounted.vellum.handler(req, res);
    }
    const source = url.startsWith("/client/") ? moduleSource(url.slice("/client/".length)) : undefined;
    if (source !== undefined) return res.writeHead(200, { "content-type": "text/javascript" }).end(source);
    if (url === "/") return res.writeHead(200, { "content-type": "text/html" }).end(PAGE);
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => pages.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
  server = mounted = await startVellum({ config: { corsOrigins: [origin] } });
  browser = await launchChromium();
  page = await browser.newPage();
  await page.goto(`${origin}/`);
  await page.waitForFunction(() => "vellumClient" in window);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => (pages ? pages.close(resolve) : resolve(undefined)));
  await server?.close();
});

interface PageRun {
  mode: string;
  slug: string;
  mime: string;
  missing: unknown;
  cookie: string;
  token: string;
}

/** Creates an article and uploads an image from the page, through a client of `baseUrl` in the default mode. */
function runInPage(baseUrl: string, slug: string): Promise<PageRun> {
  return page.evaluate(
    async ({ baseUrl, key, slug, png }) => {
      const { createClient, defaultCookieMode, VellumApiError } = (window as unknown as AppWindow).vellumClient;
      const client = createClient({ baseUrl, apiKey: key });
      const article = await client.articles.create({ title: slug, slug, content: "<p>from a page</p>" }).applied();
      const item = await client.media.upload(new Blob([new Uint8Array(png)]), { filename: "pixel.png" });
      const missing = await client.articles.get("missing").catch((e: unknown) => e);
      return {
        mode: defaultCookieMode(),
        slug: article.slug,
        mime: item.mime,
        missing: missing instanceof VellumApiError ? [missing.status, missing.code] : String(missing),
        cookie: document.cookie,
        token: await client.csrf.token(),
      };
    },
    { baseUrl, key: API_KEY, slug, png: [...PNG] },
  );
}

describe.skipIf(skip)("in Chromium", () => {
  it("writes on the page's own origin, under a mount prefix, with the cookie the browser keeps", async () => {
    const run = await runInPage(`${origin}/cms`, "same-origin");
    expect(run).toEqual({
      mode: "browser",
      slug: "same-origin",
      mime: "image/png",
      missing: [404, "not_found"],
      cookie: `svc_csrf=${run.token}`,
      token: expect.any(String),
    });
  });

  it("writes cross-origin with CORS credentials", async () => {
    const run = await runInPage(server.url, "cross-origin");
    expect(run).toMatchObject({
      mode: "browser",
      slug: "cross-origin",
      mime: "image/png",
      missing: [404, "not_found"],
    });
  });

  it("manual mode cannot write cross-origin from a page: the browser drops its Cookie header", async () => {
    const code = await page.evaluate(
      async ({ baseUrl, key }) => {
        const { createClient } = (window as unknown as AppWindow).vellumClient;
        const client = createClient({ baseUrl, apiKey: key, cookies: "manual" });
        return client.cache.purge("anything").then(
          () => "written",
          (e: { code?: string }) => e.code,
        );
      },
      { baseUrl: server.url, key: API_KEY },
    );
    expect(code).toBe("csrf_failed");
  });
});
