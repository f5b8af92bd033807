import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSanitizer } from "../src/sanitize.js";
import { launchChromium, skipWithoutChromium } from "../../../test-support/chromium.js";
import { loadXssVectors } from "./fixtures/xss.js";

const skip = skipWithoutChromium("articles");

/**
 * The page's first script (ours): every way the corpus signals success (dialogs, print, and the
 * `__xss` marker) records a hit instead of blocking.
 */
const INSTRUMENT = `(() => {
  window.__hits = [];
  const hit = (how) => (...args) => { window.__hits.push(how + ":" + args.map(String).join(",")); };
  window.alert = hit("alert"); window.confirm = hit("confirm"); window.prompt = hit("prompt");
  window.print = hit("print"); window.__xss = hit("__xss");
})();`;

/**
 * Rewrites the corpus's success signals (`alert(`, `confirm(`, `prompt(`, `print(`, however they
 * are reached: `top.alert(`, `window['alert'](`…) to `__xss(`, so a hit is recorded even where a
 * payload would have found the native dialog first.
 */
function instrumentPayload(payload: string): string {
  return payload.replace(/\b(?:alert|confirm|prompt|print)(?=\s*[('"`\]])/g, "__xss");
}

/** Renders the fragments in a fresh page (its own realm); returns the hits and the page. */
async function render(
  browser: Browser,
  dialogs: string[],
  fragments: string[],
): Promise<{ hits: string[]; page: Page }> {
  const page = await browser.newPage();
  await page.route("**/*", (route) => route.abort());
  page.on("dialog", (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  const body = fragments.map((html, i) => `<div data-vector="${i}">${html}</div>`).join("\n");
  const head = `<meta charset="utf-8"><script>${INSTRUMENT}</script>`;
  await page.setContent(`<!doctype html><html><head>${head}</head><body>${body}</body></html>`, {
    waitUntil: "load",
  });
  await page.waitForTimeout(300);
  const hits = await page.evaluate(() => (window as unknown as { __hits: string[] }).__hits);
  return { hits, page };
}

/** What the real HTML parser built: event attributes and the protocols of URL attributes. */
async function unsafeDom(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const problems: string[] = [];
    const safe = new Set(["http:", "https:", "mailto:"]);
    for (const el of Array.from(document.body.querySelectorAll("*"))) {
      for (const attr of Array.from(el.attributes)) {
        if (/^on/i.test(attr.name) || attr.name === "style") problems.push(`${el.tagName} ${attr.name}`);
      }
      for (const name of ["href", "src", "cite", "action", "formaction", "xlink:href"]) {
        const value = el.getAttribute(name);
        if (value === null) continue;
        const protocol = URL.canParse(value, "https://vellum.invalid/")
          ? new URL(value, "https://vellum.invalid/").protocol
          : "unparsable:";
        if (!safe.has(protocol) && protocol !== "about:") problems.push(`${el.tagName} ${name}=${value}`);
      }
      if (/^(SCRIPT|IFRAME|OBJECT|EMBED|BASE|META|FORM|STYLE|LINK|FRAME|SVG|MATH)$/i.test(el.tagName)) {
        problems.push(el.tagName);
      }
    }
    return problems;
  });
}

describe.skipIf(skip)("sanitized content in Chromium", () => {
  let browser: Browser;
  const dialogs: string[] = [];
  const vectors = loadXssVectors();
  const sanitize = createSanitizer({ mediaPrefix: "/media/" });

  beforeAll(async () => {
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
  });

  it("the detector catches unsanitized payloads (control)", async () => {
    const { hits, page } = await render(browser, dialogs, [
      "<img src=x onerror=alert(1)>",
      "<svg><script>confirm(2)</script></svg>",
      "<details open ontoggle=prompt(3)>",
    ]);
    expect(hits.sort()).toEqual(["alert:1", "confirm:2", "prompt:3"]);
    expect(await unsafeDom(page)).toEqual(["IMG onerror", "svg", "script", "DETAILS ontoggle"]);
    await page.close();
    dialogs.length = 0;
  });

  it("none of the 1,004 sanitized vectors runs script or leaves an unsafe element or URL in the DOM", async () => {
    for (let start = 0; start < vectors.length; start += 250) {
      const chunk = vectors.slice(start, start + 250);
      const fragments = chunk.map((v) => sanitize(instrumentPayload(v.payload)));
      const { hits, page } = await render(browser, dialogs, fragments);
      const range = `vectors ${start}–${start + chunk.length - 1}`;
      expect(hits, range).toEqual([]);
      expect(await unsafeDom(page), range).toEqual([]);
      await page.close();
    }
    expect(dialogs).toEqual([]);
  }, 120_000);
});
