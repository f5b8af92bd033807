import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, skipWithoutChromium } from "../../../test-support/chromium.js";
import { API_KEY, type RunningExample, startExample } from "./running-example.js";

// The admin UI of a Vellum mounted under /cms in Express, in Debian's Chromium: its files, the API
// calls, the CSRF cookie and the job it waits for all live under the prefix.

describe.skipIf(skipWithoutChromium("examples/express"))("the admin UI under /cms", () => {
  let example: RunningExample;
  let base: string;
  let browser: Browser;

  beforeAll(async () => {
    example = await startExample();
    base = example.base;
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await example?.stop();
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
