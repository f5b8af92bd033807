import { readdirSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { grayPng } from "../../../plugins/media/test/fixtures/images.js";
import { launchChromium, skipWithoutChromium } from "../../../test-support/chromium.js";
import { flipMiddleByte } from "./backup-support.js";
import { type Server, startServer, writeHeadersFor } from "./fuzz-support.js";
import { waitFor } from "./support.js";

// The admin UI in a real browser (Debian's Chromium) against `vellum serve` with the default
// plugins and backups on: sign in, write, upload, find, rename, delete, and see a failed restore
// drill. Every step goes through the public API the UI calls; the test checks the stored result
// through the same API, and that the page's strict CSP refused nothing.

const API_KEY = "admin-ui-test-key-0123456789abcdef";
const PASSPHRASE = "admin-ui-test-passphrase";
/** What the test types into every prompt (the image's alternative text). */
const PROMPT_ANSWER = "A gray <square> & more";
const EXPECTED_FAILURES = /^Failed to load resource: the server responded with a status of (401|409) /;

interface StoredArticle {
  slug: string;
  title: string;
  tags: string[];
  content: string;
}

describe.skipIf(skipWithoutChromium("admin UI"))("the admin UI in a browser", () => {
  let dir: string;
  let target: string;
  let server: Server;
  let browser: Browser;
  let page: Page;
  const refused: string[] = [];
  /** The messages of the dialogs the page opened, and how the next ones are answered. */
  const dialogs: string[] = [];
  let acceptDialogs = true;

  const article = async (slug: string) => {
    const res = await fetch(`${server.url}/api/v1/articles/${slug}`);
    return res.status === 200 ? ((await res.json()) as StoredArticle) : res.status;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "vellum-admin-ui-"));
    target = join(dir, "target");
    await mkdir(target);
    server = await startServer(dir, {
      SERVICE_DATA_DIR: join(dir, "data"),
      SERVICE_API_KEY: API_KEY,
      BACKUP_TARGET: target,
      SERVICE_BACKUP_PASSPHRASE: PASSPHRASE,
    });
    browser = await launchChromium();
    page = await browser.newPage();
    page.on("console", (message) => {
      // The answers the test provokes on purpose (a wrong key, a taken slug) are logged as failed loads.
      if (message.type() === "error" && !EXPECTED_FAILURES.test(message.text())) refused.push(message.text());
    });
    page.on("pageerror", (error) => refused.push(error.message));
    page.on("dialog", (dialog) => {
      dialogs.push(dialog.message());
      if (dialog.type() === "prompt") void dialog.accept(PROMPT_ANSWER);
      else void (acceptDialogs ? dialog.accept() : dialog.dismiss());
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("signs in only with the right key", async () => {
    await page.goto(`${server.url}/admin`);
    await page.getByLabel("API key").fill("not-the-key-but-long-enough");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("A valid API key is required");
    await page.getByLabel("API key").fill(API_KEY);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Articles" }).waitFor();
    // The key stays in the tab: a reload keeps the session.
    await page.reload();
    await page.getByRole("heading", { name: "Articles" }).waitFor();
  }, 30_000);

  it("publishes a new article written in the editor, with an uploaded image", async () => {
    await page.getByRole("link", { name: "New article" }).click();
    await page.getByLabel("Title").fill("Hello from the admin");
    expect(await page.getByLabel("Slug").inputValue()).toBe("hello-from-the-admin");
    await page.getByLabel("Tags").fill("news, admin");
    const area = page.getByRole("textbox", { name: "Content" });
    await area.click();
    await page.keyboard.type("Plain words, then ");
    await page.getByRole("button", { name: "Bold" }).click();
    await page.keyboard.type("bold words");
    await page.getByRole("button", { name: "Bold" }).click();
    await page.keyboard.press("Enter");
    await page.locator('input[type="file"]').setInputFiles({
      name: "gray.png",
      mimeType: "image/png",
      buffer: await grayPng(64, 48),
    });
    await area.locator("img").waitFor();
    await page.getByRole("button", { name: "Publish" }).click();
    await page.getByRole("status").filter({ hasText: "Published." }).waitFor();
    expect(new URL(page.url()).hash).toBe("#/articles/hello-from-the-admin");

    const stored = await article("hello-from-the-admin");
    expect(stored).toMatchObject({ title: "Hello from the admin", tags: ["news", "admin"] });
    const { content } = stored as StoredArticle;
    expect(content).toMatch(/Plain words, then <(b|strong)>bold words<\/(b|strong)>/);
    expect(content).toMatch(/<img src="[^"]*\/media\/[0-9A-Z]{26}\.webp"[^>]* width="64" height="48"/);
    // The alternative text asked for after the upload, escaped once on its way.
    expect(content).toContain('alt="A gray &lt;square&gt; &amp; more"');
  }, 30_000);

  it("lists, finds and filters it, and shows a conflict where it happens", async () => {
    await page.getByRole("link", { name: "Articles" }).click();
    await page.getByRole("link", { name: "Hello from the admin" }).waitFor();
    await page.getByRole("searchbox", { name: "Search articles" }).fill("bold");
    await expect.poll(() => page.locator(".rows mark").first().textContent()).toBe("bold");
    await page.getByRole("searchbox", { name: "Search articles" }).fill("");
    await page.getByRole("button", { name: "admin" }).first().click();
    await page.getByText("Tagged").waitFor();
    await page.getByRole("link", { name: "Hello from the admin" }).waitFor();

    await page.getByRole("link", { name: "New article" }).click();
    await page.getByLabel("Title").fill("Hello from the admin");
    await page.getByRole("textbox", { name: "Content" }).click();
    await page.keyboard.type("A second one with the same slug.");
    await page.getByRole("button", { name: "Publish" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toMatch(/slug/i);
    expect(new URL(page.url()).hash).toBe("#/articles/new");
  }, 30_000);

  it("renames, edits the HTML itself, and deletes", async () => {
    await page.goto(`${server.url}/admin#/articles/hello-from-the-admin`);
    await page.getByRole("heading", { name: "Edit article" }).waitFor();
    await page.getByLabel("Slug").fill("hello-renamed");
    await page.getByRole("button", { name: "HTML" }).click();
    const source = page.getByRole("textbox", { name: "Content" });
    await source.fill(`${await source.inputValue()}<p>Typed as <em>HTML</em>.</p><script>alert(1)</script>`);
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByRole("status").filter({ hasText: "Its address is now hello-renamed." }).waitFor();
    expect(new URL(page.url()).hash).toBe("#/articles/hello-renamed");
    expect(await article("hello-from-the-admin")).toBe(404);
    const renamed = (await article("hello-renamed")) as StoredArticle;
    expect(renamed.content).toContain("<p>Typed as <em>HTML</em>.</p>");
    expect(renamed.content).not.toContain("script");

    await page.getByRole("button", { name: "Delete" }).click();
    await page.getByRole("heading", { name: "Articles" }).waitFor();
    await waitFor(async () => (await article("hello-renamed")) === 404, "the article deleted");
  }, 30_000);

  it("shows lists and search results 20 at a time, with More for the rest", async () => {
    const headers = await writeHeadersFor(server.url, API_KEY);
    for (let i = 0; i < 25; i++) {
      const body = JSON.stringify({ title: `Zebra ${i}`, slug: `zebra-${i}`, content: "<p>A zebra crossing.</p>" });
      expect((await fetch(`${server.url}/api/v1/articles`, { method: "POST", headers, body })).status).toBe(202);
    }
    await waitFor(async () => (await article("zebra-24")) !== 404, "the last create applied");

    await page.goto(`${server.url}/admin#/`);
    await page.reload(); // the list shown before the creates
    const rows = page.locator(".rows > li");
    await expect.poll(() => rows.count()).toBe(20);
    await page.getByRole("button", { name: "More" }).click();
    await expect.poll(() => rows.count()).toBe(25);
    await expect.poll(() => page.getByRole("button", { name: "More" }).count()).toBe(0);

    await page.getByRole("searchbox", { name: "Search articles" }).fill("zebra");
    await page.getByText("25 found").waitFor();
    await expect.poll(() => rows.count()).toBe(20);
    await page.getByRole("button", { name: "More" }).click();
    await expect.poll(() => rows.count()).toBe(25);
    await expect.poll(() => page.getByRole("button", { name: "More" }).count()).toBe(0);
  }, 60_000);

  it("asks before leaving an article with unsaved changes, and stays when told to", async () => {
    await page.getByRole("link", { name: "New article" }).click();
    await page.getByLabel("Title").fill("Not saved yet");
    dialogs.length = 0;
    acceptDialogs = false;
    await page.getByRole("link", { name: "Articles" }).click();
    await expect.poll(() => dialogs).toEqual([expect.stringContaining("Leave without saving?")]);
    expect(new URL(page.url()).hash).toBe("#/articles/new");
    expect(await page.getByLabel("Title").inputValue()).toBe("Not saved yet");
    acceptDialogs = true;
    await page.getByRole("link", { name: "Articles" }).click();
    await page.getByRole("heading", { name: "Articles" }).waitFor();
    expect(dialogs).toHaveLength(2);
  }, 30_000);

  it("says Restore FAILED on every view once the restore drill fails, and details it in Status", async () => {
    await waitFor(() => readdirSync(target).some((name) => name.endsWith(".vpbk")), "a first generation", 30_000);
    const [generation] = readdirSync(target).filter((name) => name.endsWith(".vpbk"));
    flipMiddleByte(join(target, generation ?? ""));
    const drill = await fetch(`${server.url}/admin/backup/drill`, {
      method: "POST",
      headers: { authorization: `Bearer ${API_KEY}` },
    });
    expect(((await drill.json()) as { drill: { ok: boolean } }).drill.ok).toBe(false);

    await page.reload();
    await expect
      .poll(() => page.locator(".banner").textContent(), { timeout: 10_000 })
      .toContain("backup: Restore FAILED");
    await page.getByRole("link", { name: "Status" }).click();
    await page.getByRole("heading", { name: "Status" }).waitFor();
    const backup = page.locator(".components li.attention", { hasText: "backup" });
    await expect.poll(() => backup.textContent()).toContain("Restore FAILED");
  }, 60_000);

  it("runs the operator actions the plugins declare from Status, with the key (and CSRF where asked)", async () => {
    const card = (name: string) => page.locator(".components li", { has: page.getByRole("heading", { name }) });
    const outcome = (name: string) => card(name).getByRole("status");

    await card("backup").getByRole("button", { name: "Run the restore drill" }).click();
    await expect.poll(() => outcome("backup").textContent()).toMatch(/^Run the restore drill: .*"ok":false/);
    await card("search").getByRole("button", { name: "Rebuild the search index" }).click();
    await expect.poll(() => outcome("search").textContent()).toMatch(/^Rebuild the search index: \{/);
    // Key and CSRF: the cleanup asks first, and removes nothing younger than MEDIA_ORPHAN_HOURS.
    dialogs.length = 0;
    await card("media").getByRole("button", { name: "Remove orphaned media" }).click();
    await expect.poll(() => outcome("media").textContent()).toMatch(/^Remove orphaned media: .*"removed":0/);
    expect(dialogs).toEqual([expect.stringContaining("MEDIA_ORPHAN_HOURS")]);
    await expect.poll(() => card("webhooks").getByRole("button").count()).toBe(1);
  }, 60_000);

  it("ran without a script error or a refusal of its content security policy", () => {
    expect(refused).toEqual([]);
  });
});
