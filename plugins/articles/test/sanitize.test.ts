import type { TestVellum } from "@vellum/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSanitizer } from "../src/sanitize.js";
import { expectInert, loadXssVectors } from "./fixtures/xss.js";
import { ARTICLES, bootArticles, post, waitForJob } from "./helpers.js";

const vectors = loadXssVectors();
const sanitize = createSanitizer({ mediaPrefix: "/media/" });

/** Ordinary article markup that must come back byte for byte. */
const ORDINARY: string[] = [
  "<p>Hello <strong>world</strong></p>",
  "<h1>One</h1><h2>Two</h2><h3>Three</h3><h4>Four</h4><h5>Five</h5><h6>Six</h6>",
  "<ul><li>One</li><li>Two</li></ul>",
  '<ol start="3"><li>Three</li><li value="7">Seven</li></ol>',
  "<ul><li>Nested<ul><li>Inner</li></ul></li></ul>",
  '<p><a href="https://example.com/page?x=1&amp;y=2" rel="noopener noreferrer">a link</a></p>',
  '<p><a href="mailto:editor@example.com" rel="noopener noreferrer">mail us</a></p>',
  '<p><a href="/about" rel="noopener noreferrer">relative</a> and <a href="#part-2" rel="noopener noreferrer">anchor</a></p>',
  '<p><a href="http://example.org/" title="Example" rel="noopener noreferrer">titled</a></p>',
  '<img src="https://cdn.example.com/cat.webp" alt="A cat" width="640" height="480" />',
  '<img src="/media/01ARZ3NDEKTSV4RRFFQ69G5FAV.webp" alt="An upload" />',
  '<figure><img src="https://example.com/x.png" alt="x" /><figcaption>A caption</figcaption></figure>',
  '<pre><code class="language-ts">const x = a &lt; b &amp;&amp; c &gt; d;</code></pre>',
  "<p>Inline <code>code()</code> here</p>",
  '<blockquote cite="https://example.com/source"><p>Quoted text</p></blockquote>',
  '<table><caption>Data</caption><thead><tr><th scope="col">A</th><th scope="col">B</th></tr></thead><tbody><tr><td colspan="2">ab</td></tr></tbody><tfoot><tr><td>1</td><td>2</td></tr></tfoot></table>',
  '<table><colgroup><col span="2" /></colgroup><tbody><tr><td rowspan="2">x</td><td>y</td></tr></tbody></table>',
  "<p><em>em</em> <i>i</i> <b>b</b> <u>u</u> <s>s</s></p>",
  "<p>H<sub>2</sub>O and E=mc<sup>2</sup></p>",
  '<p><del cite="https://example.com/why">old</del> <ins datetime="2026-01-01">new</ins></p>',
  "<p><mark>marked</mark> <small>fine print</small></p>",
  '<p><abbr title="HyperText Markup Language">HTML</abbr></p>',
  "<dl><dt>Term</dt><dd>Definition</dd></dl>",
  "<p>Line one<br />Line two</p>",
  "<p>Above</p><hr /><p>Below</p>",
  "<p>Tom &amp; Jerry &lt;3 \"double\" and 'single' quotes</p>",
  "<p>Unicode: héllo — 日本語 🙂 ∑</p>",
  "<p><kbd>Ctrl</kbd> + <kbd>C</kbd>, <samp>output</samp>, <var>x</var></p>",
  '<p><q cite="https://example.com">short quote</q> in <cite>A Book</cite></p>',
  '<p><time datetime="2026-01-01T00:00:00Z">New year</time></p>',
  "<div><span>plain div and span</span></div>",
  "Just text without any tag",
  "",
  "<h2>Section</h2><p>Text with <strong><em>nested</em></strong> emphasis.</p><h3>Sub</h3><p>More.</p>",
  '<p>See <a href="https://example.com/a_(b)" rel="noopener noreferrer">parens</a>.</p>',
];

describe("content sanitizer", () => {
  it("the corpus is the shared one, 1,004 vectors", () => {
    expect(vectors).toHaveLength(1004);
  });

  it("leaves no script, event attribute, unsafe URL, forbidden element or CSS in any of the 1,004 vectors", () => {
    for (const vector of vectors) expectInert(sanitize(vector.payload), vector.id);
  });

  it("keeps, in any of the 1,004 vectors, only images from http(s) or resolved paths under the media prefix", () => {
    for (const vector of vectors) {
      for (const [, src] of sanitize(vector.payload).matchAll(/<img\b[^>]*\ssrc="([^"]*)"/gi)) {
        const value = (src ?? "").replace(/&amp;/g, "&");
        if (/^https?:\/\//i.test(value)) continue;
        const resolved = new URL(value, "http://vellum.invalid/");
        expect(resolved.origin, vector.id).toBe("http://vellum.invalid");
        expect(`${resolved.pathname}${resolved.search}${resolved.hash}`, vector.id).toBe(value);
        expect(resolved.pathname.startsWith("/media/"), vector.id).toBe(true);
      }
    }
  });

  it("is idempotent on its own output", () => {
    for (const vector of vectors) {
      const once = sanitize(vector.payload);
      expect(sanitize(once), vector.id).toBe(once);
    }
  });

  it.each(ORDINARY)("keeps ordinary markup unchanged: %s", (html) => {
    expect(sanitize(html)).toBe(html);
  });

  it.each([
    ['<a href="https://x.example/">x</a>', '<a href="https://x.example/" rel="noopener noreferrer">x</a>'],
    [
      '<a href="https://x.example/" rel="opener" target="_blank">x</a>',
      '<a href="https://x.example/" rel="noopener noreferrer">x</a>',
    ],
    ['<a href="javascript:alert(1)">x</a>', '<a rel="noopener noreferrer">x</a>'],
    ['<img src="data:image/png;base64,AAAA" alt="d" />', '<img alt="d" />'],
    ['<img src="//evil.example/x.png" alt="p" />', '<img alt="p" />'],
    ['<img src="relative.png" alt="r" />', '<img alt="r" />'],
    ['<img src="/media/../api/v1/articles" alt="t" />', '<img alt="t" />'],
    ['<img src="/media/%2e%2e/api/v1/articles" alt="t" />', '<img alt="t" />'],
    ['<img src="/media\\..\\admin/reindex" alt="t" />', '<img alt="t" />'],
    ['<img src="/media/a/../b.webp" alt="n" />', '<img src="/media/b.webp" alt="n" />'],
    ['<img src=" /media/c.webp?v=1" alt="q" />', '<img src="/media/c.webp?v=1" alt="q" />'],
    ['<img src="https://ok.example/i.png" srcset="javascript:x 1x" />', '<img src="https://ok.example/i.png" />'],
    ['<p style="background:url(javascript:x)">s</p>', "<p>s</p>"],
    ["<style>p{color:red}</style><p>after</p>", "<p>after</p>"],
    ["<script>alert(1)</script><p>after</p>", "<p>after</p>"],
    ['<iframe src="https://x.example"></iframe><p>after</p>', "<p>after</p>"],
    ['<form action="https://x.example"><p>inside</p></form>', "<p>inside</p>"],
    ['<svg><a href="https://x.example">in svg</a></svg><p>after</p>', "<p>after</p>"],
    ['<p id="getElementById" class="x" onclick="x()">p</p>', "<p>p</p>"],
    ["<!-- comment --><p>kept</p>", "<p>kept</p>"],
  ])("rewrites %s to %s", (input, output) => {
    expect(sanitize(input)).toBe(output);
  });

  it.each([
    ['<img src="/cms/media/a.webp" alt="m" />', "/cms", '<img src="/cms/media/a.webp" alt="m" />'],
    ['<img src="/cms/media/../api/v1/articles" alt="m" />', "/cms", '<img alt="m" />'],
    ['<img src="/cms/media/a.webp" alt="m" />', "", '<img alt="m" />'],
    ['<img src="/other/media/a.webp" alt="m" />', "/cms", '<img alt="m" />'],
    ['<img src="/media/a.webp" alt="m" />', "/cms", '<img src="/media/a.webp" alt="m" />'],
  ])("under the mount prefix %s (%s) keeps media sources of that mount only: %s", (input, prefix, output) => {
    expect(sanitize(input, prefix)).toBe(output);
    expect(sanitize(input)).toBe(sanitize(input, ""));
  });
});

describe("content through the HTTP write path", () => {
  let t: TestVellum;

  beforeAll(async () => {
    t = await bootArticles();
  });

  afterAll(async () => {
    expect(t.errors).toEqual([]);
    await t.close();
  });

  /** POSTs every content, waits until all are applied, and returns what GET returns for each. */
  async function roundTrip(prefix: string, contents: string[]): Promise<string[]> {
    const ids: string[] = [];
    for (let start = 0; start < contents.length; start += 100) {
      const chunk = contents.slice(start, start + 100);
      const responses = await Promise.all(
        chunk.map((content, i) =>
          post(t, { title: `${prefix} ${start + i}`, slug: `${prefix}-${start + i}`, content }),
        ),
      );
      for (const res of responses) {
        expect(res.status).toBe(202);
        ids.push((await res.json()).id);
      }
    }
    for (const id of ids) expect(await waitForJob(t, id)).toEqual({ id, status: "applied" });
    return Promise.all(
      contents.map(async (_, i) => (await (await t.fetch(`${ARTICLES}/${prefix}-${i}`)).json()).content as string),
    );
  }

  it("stores every one of the 1,004 vectors inert, exactly as the sanitizer returns it", async () => {
    const stored = await roundTrip(
      "xss",
      vectors.map((v) => v.payload),
    );
    for (const [i, vector] of vectors.entries()) {
      expect(stored[i], vector.id).toBe(sanitize(vector.payload));
      expectInert(stored[i] as string, vector.id);
    }
  });

  it("stores ordinary markup unchanged", async () => {
    expect(await roundTrip("ordinary", ORDINARY)).toEqual(ORDINARY);
  });

  it("sanitizes content on update too", async () => {
    const [payload] = vectors.filter((v) => /onerror/i.test(v.payload));
    const res = await t.fetch(`${ARTICLES}/ordinary-0`, {
      method: "PUT",
      json: { content: payload?.payload },
      headers: await t.writeHeaders(),
    });
    expect(res.status).toBe(200);
    const { content } = await res.json();
    expect(content).toBe(sanitize(payload?.payload ?? ""));
    expectInert(content, "update");
  });
});
