import { describe, expect, it } from "vitest";
import { chooseCorrection, maxEdits } from "../../src/typo/correct.js";
import { editDistance } from "../../src/typo/distance.js";
import { deletionVariants, isCorrectable } from "../../src/typo/variants.js";

describe("editDistance", () => {
  it.each([
    ["search", "search", 0],
    ["serach", "search", 1],
    ["seach", "search", 1],
    ["searchh", "search", 1],
    ["saerch", "search", 1],
    ["sarech", "search", 2],
    ["kitten", "sitting", 3],
  ])("%s → %s is %i", (a, b, d) => {
    expect(editDistance(a, b, 3)).toBe(d);
  });

  it("stops early past the limit", () => {
    expect(editDistance("abcdefgh", "zyxwvuts", 2)).toBe(3);
    expect(editDistance("a", "abcdef", 2)).toBe(3);
  });
});

describe("deletion variants", () => {
  it("are the word and each one-letter deletion", () => {
    expect(deletionVariants("seed").sort()).toEqual(["eed", "sed", "see", "seed"]);
  });

  it("share an entry for any single edit", () => {
    const share = (a: string, b: string) => deletionVariants(a).some((v) => deletionVariants(b).includes(v));
    expect(share("serach", "search")).toBe(true);
    expect(share("searh", "search")).toBe(true);
    expect(share("searchs", "search")).toBe(true);
    expect(share("seerch", "search")).toBe(true);
  });

  it("skip short words, long words and numbers", () => {
    expect(isCorrectable("ab")).toBe(false);
    expect(isCorrectable("abc")).toBe(true);
    expect(isCorrectable("x".repeat(25))).toBe(false);
    expect(isCorrectable("2024")).toBe(false);
  });
});

describe("chooseCorrection", () => {
  it("prefers fewer edits, then the more frequent word", () => {
    const candidates = [
      { term: "search", docs: 600 },
      { term: "seraph", docs: 500 },
      { term: "starch", docs: 1000 },
    ];
    expect(chooseCorrection("serach", candidates)?.term).toBe("search");
    expect(chooseCorrection("serach", [{ term: "search", docs: 10 }, ...candidates.slice(1)])?.term).toBe("seraph");
    expect(
      chooseCorrection("wold", [
        { term: "world", docs: 50 },
        { term: "would", docs: 900 },
      ])?.term,
    ).toBe("would");
  });

  it("gives candidates keeping the first letter a head start", () => {
    expect(
      chooseCorrection("thoot", [
        { term: "shoot", docs: 100 },
        { term: "toot", docs: 100 },
      ])?.term,
    ).toBe("toot");
    expect(
      chooseCorrection("thoot", [
        { term: "shoot", docs: 300 },
        { term: "toot", docs: 100 },
      ])?.term,
    ).toBe("shoot");
  });

  it("weighs how likely the edit is: a forgotten or swapped letter beats a wrong or extra one", () => {
    const candidates = [
      { term: "buying", docs: 1000 },
      { term: "burning", docs: 200 },
    ];
    expect(chooseCorrection("buning", candidates)?.term).toBe("burning");
    expect(chooseCorrection("biuying", candidates)?.term).toBe("buying");
    expect(
      chooseCorrection("fromt", [
        { term: "from", docs: 50 },
        { term: "front", docs: 10 },
      ])?.term,
    ).toBe("from");
    expect(
      chooseCorrection("form", [
        { term: "from", docs: 10 },
        { term: "farm", docs: 50 },
      ])?.term,
    ).toBe("from");
  });

  it("accepts one edit for short words and two for longer ones", () => {
    expect(maxEdits("cat")).toBe(1);
    expect(maxEdits("search")).toBe(2);
    expect(chooseCorrection("cta", [{ term: "cat", docs: 5 }])?.term).toBe("cat");
    expect(
      chooseCorrection("dgo", [
        { term: "dog", docs: 5 },
        { term: "ago", docs: 5 },
      ])?.term,
    ).toBe("dog");
    expect(chooseCorrection("abcd", [{ term: "wxyz", docs: 5 }])).toBeUndefined();
    expect(chooseCorrection("ab", [{ term: "abc", docs: 5 }])).toBeUndefined();
  });
});
