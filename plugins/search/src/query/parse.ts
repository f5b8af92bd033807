import { endsInWord, MAX_WORD_LENGTH, tokenize } from "../text/tokenize.js";

/**
 * A search query as plain words. Nothing in `q` is syntax: quotes, `*`, `NEAR`, `AND`/`OR`/`NOT`,
 * parentheses and `column:` filters are split into words (or dropped as punctuation) exactly as
 * article text is, so user input can never reach the FTS5 query language.
 */
export interface QueryTerm {
  text: string;
  /** The last word while the user is still typing it: matched as a prefix too. */
  prefix: boolean;
}

export interface ParsedQuery {
  terms: QueryTerm[];
}

/** Distinct words used from one query; the rest are ignored (a 256-character query rarely has more). */
export const MAX_QUERY_TERMS = 16;

export function parseQuery(q: string): ParsedQuery {
  const words = tokenize(q).filter((word) => word.length <= MAX_WORD_LENGTH);
  const typing = endsInWord(q) ? words.at(-1) : undefined;
  const seen = new Set<string>();
  const terms: QueryTerm[] = [];
  for (const word of words) {
    if (seen.has(word)) continue;
    seen.add(word);
    if (terms.length < MAX_QUERY_TERMS) terms.push({ text: word, prefix: false });
  }
  const last = typing === undefined ? undefined : terms.find((term) => term.text === typing);
  if (last) last.prefix = true;
  return { terms };
}
