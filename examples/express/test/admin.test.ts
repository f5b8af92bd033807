import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type App, createApp } from "../src/app.js";

// The admin UI of a Vellum mounted under /cms in Express, in Debian's Chromium: its files, the API
// calls, the CSRF cookie and the job it waits for all live under the prefix.

const CHROMIUM = "/usr/bin/chromium";
const hasChromium = existsSync(CHROMIUM);
const browserRequired = process.env.VELLUM_REQUIRE_BROWSER === "1";
if (!hasChromium && !browserRequired)
  console.warn(`[examples/express] skipping the admin UI browser test: ${CHROMIUM} is not installed`);

const API_KEY = "example-key-0123456789-abcdef";

describe.skipIf(!hasChromium && !browserRequired)("the admin UI under /cms", () => {
  let app: App;
  let server: Server;
  let base: string;
  let dataDir: string;
  let browser: Browser;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "vellum-example-express-admin-"));
    app = await createApp({ dataDir, apiKey: API_KEY });
    server = app.app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => server?.close(resolve));
    await app?.vellum.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("signs in, publishes an article and lists it, every request under the prefix", async () => {
    const page = await browser.newPage();
    const paths: string[] = [];
    page.on("request", (request) => paths.push(new URL(request.url()).pathname));
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));

    await page.goto(`${base}/cms/admin`);
    await page.getByLabel("API key").fill(API_KEY);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("link", { name: "New article" }).click();
    await page.getByLabel("Title").fill("Mounted");
    await page.getByRole("textbox", { name: "Content" }).click();
    await page.keyboard.type("Written under /cms.");
    await page.getByRole("button", { name: "Publish" }).click();
    await page.getByRole("status").filter({ hasText: "Published." }).waitFor();
    await page.getByRole("link", { name: "Articles" }).click();
    await page.getByRole("link", { name: "Mounted" }).waitFor();

    const stored = await fetch(`${base}/cms/api/v1/articles/mounted`);
    expect(((await stored.json()) as { content: string }).content).toContain("Written under /cms.");
    expect(paths.filter((path) => !path.startsWith("/cms/"))).toEqual([]);
    expect(paths).toEqual(expect.arrayContaining(["/cms/api/v1/csrf", "/cms/api/v1/articles"]));
    expect(errors).toEqual([]);
    await page.close();
  }, 30_000);
});
