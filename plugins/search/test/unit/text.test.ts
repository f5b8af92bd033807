import { describe, expect, it } from "vitest";
import { parseQuery } from "../../src/query/parse.js";
import { cleanText, htmlToText } from "../../src/text/html-to-text.js";
import { endsInWord, tokenize, vocabularyWords } from "../../src/text/tokenize.js";

describe("htmlToText", () => {
  it("drops tags, keeps inline words whole and separates blocks", () => {
    expect(htmlToText("<p>un<em>usual</em> <strong>words</strong></p><p>next</p><ul><li>a</li><li>b</li></ul>")).toBe(
      "unusual words next a b",
    );
  });

  it("decodes entities and drops script, style and comments", () => {
    expect(htmlToText("<p>Fish &amp; chips &lt;3 &#233;t&#xE9; &#x263A; &copy; &bogus;</p>")).toBe(
      "Fish & chips <3 été ☺ © &bogus;",
    );
    expect(htmlToText("a<script>alert('x')</script>b<style>p{}</style>c<!-- note -->d")).toBe("a b c d");
    expect(htmlToText('<a href="https://x.test/?a=1&b=2" title="a > b">link</a>')).toBe("link");
  });

  it("never keeps control characters (the snippet markers rely on it)", () => {
    expect(htmlToText("a\u0001b\u0002c\u0000d\u007fe")).toBe("a b c d e");
    expect(cleanText("  title\twith \n breaks  ")).toBe("title with breaks");
  });
});

describe("tokenize", () => {
  it("lower-cases, strips diacritics and splits on everything but letters and digits", () => {
    expect(tokenize("Crème Brûlée, naïve café! Don't stop 2024")).toEqual([
      "creme",
      "brulee",
      "naive",
      "cafe",
      "don",
      "t",
      "stop",
      "2024",
    ]);
    expect(tokenize("東京 ΑΘΗΝΑ")).toEqual(["東京", "αθηνα"]);
  });

  it("keeps vocabulary words distinct and skips overlong ones", () => {
    expect([...vocabularyWords(`the The THE ${"x".repeat(41)} ok`)]).toEqual(["the", "ok"]);
  });

  it("knows when the text ends inside a word", () => {
    expect(endsInWord("sear")).toBe(true);
    expect(endsInWord("search ")).toBe(false);
    expect(endsInWord("c++")).toBe(false);
  });
});

describe("parseQuery", () => {
  it("turns syntax into words and marks the word being typed", () => {
    expect(parseQuery('title:"near" NEAR(a* b) AND OR NOT (x)')).toEqual({
      terms: [
        { text: "title", prefix: false },
        { text: "near", prefix: false },
        { text: "a", prefix: false },
        { text: "b", prefix: false },
        { text: "and", prefix: false },
        { text: "or", prefix: false },
        { text: "not", prefix: false },
        { text: "x", prefix: false },
      ],
    });
    expect(parseQuery("full text sea").terms.at(-1)).toEqual({ text: "sea", prefix: true });
    expect(parseQuery("sea full sea").terms).toEqual([
      { text: "sea", prefix: true },
      { text: "full", prefix: false },
    ]);
    expect(parseQuery("*** ()").terms).toEqual([]);
  });

  it("keeps at most 16 distinct words", () => {
    const q = Array.from({ length: 40 }, (_, i) => `w${i}`).join(" ");
    expect(parseQuery(q).terms).toHaveLength(16);
  });
});
