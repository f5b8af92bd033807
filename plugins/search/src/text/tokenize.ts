/**
 * The JavaScript side of tokenizing, kept close to FTS5's `unicode61 remove_diacritics 2`: runs
 * of letters, marks, digits and private-use characters, lower-cased, with Latin combining
 * diacritics removed. The index's vocabulary (typo correction, prefix completion, term weights)
 * and the query parser both use it, so a word means the same thing on both sides. Stemming stays
 * inside FTS5: the words here are surface forms.
 */

const TOKEN = /[\p{L}\p{M}\p{N}\p{Co}]+/gu;
const DIACRITICS = /[\u0300-\u036f]+/g;
const TOKEN_CHAR_AT_END = /[\p{L}\p{M}\p{N}\p{Co}]$/u;

/** Words longer than this are not real words (hashes, base64); they are left out of the vocabulary. */
export const MAX_WORD_LENGTH = 40;

export function normalize(text: string): string {
  return text.normalize("NFD").replace(DIACRITICS, "").toLowerCase();
}

const NON_ASCII = /[^\p{ASCII}]/u;
const ASCII_TOKEN = /[a-z0-9]+/g;

/** Every word of `text`, in order, repeats included. */
export function tokenize(text: string): string[] {
  if (!NON_ASCII.test(text)) return text.toLowerCase().match(ASCII_TOKEN) ?? [];
  return normalize(text).match(TOKEN) ?? [];
}

/** The distinct words of `text` that belong in the vocabulary. */
export function vocabularyWords(text: string): Set<string> {
  const words = new Set<string>();
  for (const word of tokenize(text)) if (word.length <= MAX_WORD_LENGTH) words.add(word);
  return words;
}

/** Whether the text ends inside a word (the user is still typing it). */
export function endsInWord(text: string): boolean {
  return TOKEN_CHAR_AT_END.test(text);
}
