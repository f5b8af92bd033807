import { MAX_WORD_LENGTH, tokenize } from "../text/tokenize.js";

/** How much a word in each field counts towards its weight in a text. */
const FIELD_BOOST = { title: 3, tags: 2, body: 1 } as const;

export interface WeightedText {
  title: string;
  tags?: readonly string[];
  body: string;
}

/** Occurrences of each word of a text, title and tag words counted several times. */
export function termFrequencies(text: WeightedText): Map<string, number> {
  const tf = new Map<string, number>();
  const add = (part: string, boost: number) => {
    for (const word of tokenize(part)) if (word.length <= MAX_WORD_LENGTH) tf.set(word, (tf.get(word) ?? 0) + boost);
  };
  add(text.title, FIELD_BOOST.title);
  add((text.tags ?? []).join("\n"), FIELD_BOOST.tags);
  add(text.body, FIELD_BOOST.body);
  return tf;
}

/** Numbers and one- or two-letter words say little about what a text is about. */
const descriptive = (word: string) => word.length >= 3 && !/^\p{N}+$/u.test(word);

/**
 * tf-idf weight of each word: `(1 + ln tf) · ln(1 + N / df)`. Words no other document has
 * (`df` 0, or only this document when `self` is set) say nothing about similarity and are left
 * out, as are numbers and very short words.
 */
export function termWeights(
  tf: Map<string, number>,
  docs: Map<string, number>,
  documents: number,
  self = false,
): Map<string, number> {
  const weights = new Map<string, number>();
  for (const [word, count] of tf) {
    if (!descriptive(word)) continue;
    const df = docs.get(word) ?? 0;
    if (df - (self ? 1 : 0) <= 0) continue;
    weights.set(word, (1 + Math.log(count)) * Math.log(1 + documents / df));
  }
  return weights;
}

/** The `n` heaviest words whose document count is at most `maxDocs` (broad words find everything). */
export function topTerms(
  weights: Map<string, number>,
  docs: Map<string, number>,
  n: number,
  maxDocs: number,
): string[] {
  return [...weights]
    .filter(([word]) => (docs.get(word) ?? 0) <= maxDocs)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, n)
    .map(([word]) => word);
}
