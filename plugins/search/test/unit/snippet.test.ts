import { describe, expect, it } from "vitest";
import { escapeHtml, makeSnippet, SNIPPET_TOKENS, stemMatcher } from "../../src/snippet.js";

const snippet = (body: string, ...words: string[]) => makeSnippet(body, stemMatcher(words));

describe("makeSnippet", () => {
  it("marks every word with a query word's stem and escapes the rest", () => {
    expect(snippet("Running <b>runners</b> & a run ran.", "run")).toBe(
      "<mark>Running</mark> &lt;b&gt;runners&lt;/b&gt; &amp; a <mark>run</mark> ran.",
    );
    expect(snippet(`"quoted" 'single' <i>`, "quoted")).toBe(
      "&quot;<mark>quoted</mark>&quot; &#39;single&#39; &lt;i&gt;",
    );
  });

  it("matches regardless of case and diacritics", () => {
    expect(snippet("Le CAFÉ et les cafés", "cafe")).toBe("Le <mark>CAFÉ</mark> et les <mark>cafés</mark>");
  });

  it("shows the window with the most distinct query words", () => {
    const words = Array.from({ length: 100 }, (_, i) => `w${i}`);
    words[10] = "alpha";
    words[70] = "alpha";
    words[72] = "beta";
    const html = snippet(words.join(" "), "alpha", "beta");
    expect(html.startsWith("…w66 w67 w68 w69 <mark>alpha</mark> w71 <mark>beta</mark>")).toBe(true);
    expect(html.endsWith("…")).toBe(true);
    expect(html.replace(/<\/?mark>|…/g, "").split(" ")).toHaveLength(SNIPPET_TOKENS);
  });

  it("starts at the beginning when nothing in the body matches", () => {
    expect(snippet("Short body text.", "absent")).toBe("Short body text.");
    expect(snippet("", "absent")).toBe("");
  });

  it("escapes the five HTML-significant characters", () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe("&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  });
});
