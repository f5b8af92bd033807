import { sql } from "@vellum/core";
import { createTestVellum } from "@vellum/core/testing";
import { describe, expect, it } from "vitest";
import { porterStem } from "../../src/text/porter.js";

// Examples from Porter's paper (1980), one or more per rule, plus everyday words.
const WORDS = `caresses ponies ties caress cats feed agreed plastered bled motoring sing conflated troubled sized
hopping tanned falling hissing fizzed failing filing happy sky relational conditional rational valenci hesitanci
digitizer conformabli radicalli differentli vileli analogousli vietnamization predication operator feudalism
decisiveness hopefulness callousness formaliti sensitiviti sensibiliti triplicate formative formalize electriciti
electrical hopeful goodness revival allowance inference airliner gyroscopic adjustable defensible irritant
replacement adjustment dependent adoption homologou communism activate angulariti homologous effective bowdlerize
probate rate cease controll roll generalizations oscillators running runs ran searches searching searched search
engine engines happily happiness skies dying lying tying agreement abilities ability national nationality
organization organize organs university universal news sings singer singing meeting meetings feet geese was is
at by on in it of to a an as be being been possibly possible relate relating related relativity`.split(/\s+/);

describe("porterStem", () => {
  it("follows the paper's examples", () => {
    expect(
      ["caresses", "ponies", "ties", "cats", "agreed", "motoring", "hopping", "filing", "happy"].map(porterStem),
    ).toEqual(["caress", "poni", "ti", "cat", "agre", "motor", "hop", "file", "happi"]);
    expect(["relational", "conditional", "generalizations", "oscillators", "effective"].map(porterStem)).toEqual([
      "relat",
      "condit",
      "gener",
      "oscil",
      "effect",
    ]);
  });

  it("agrees with FTS5's porter tokenizer", async () => {
    const t = await createTestVellum();
    try {
      const db = t.vellum.db();
      await sql`CREATE VIRTUAL TABLE porter_check USING fts5(x, tokenize='porter unicode61 remove_diacritics 2')`.execute(
        db,
      );
      await sql`CREATE VIRTUAL TABLE porter_check_terms USING fts5vocab(porter_check, instance)`.execute(db);
      for (const [i, word] of WORDS.entries())
        await sql`INSERT INTO porter_check (rowid, x) VALUES (${i + 1}, ${word})`.execute(db);
      const rows = await sql<{ term: string; doc: number }>`SELECT term, doc FROM porter_check_terms`.execute(db);
      const fts = Object.fromEntries(rows.rows.map((r) => [WORDS[r.doc - 1], r.term]));
      expect(Object.fromEntries(WORDS.map((w) => [w, porterStem(w)]))).toEqual(fts);
    } finally {
      await t.close();
    }
  });

  it("leaves short, non-ASCII and non-letter words alone", () => {
    expect(porterStem("is")).toBe("is");
    expect(porterStem("café")).toBe("café");
    expect(porterStem("r2d2")).toBe("r2d2");
  });

  it("only rewrites endings (the snippet matcher relies on it)", () => {
    for (const word of WORDS) {
      const stem = porterStem(word);
      expect(word.startsWith(stem.slice(0, Math.max(1, stem.length - 1))), word).toBe(true);
    }
  });
});
