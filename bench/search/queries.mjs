import { article, rng, slugOf, vocabulary } from "./corpus.mjs";

export { slugOf };

/**
 * 1,000 queries of four kinds, drawn from articles of the corpus: single words, phrases (2–3
 * consecutive words of a body, typed without quotes), prefixes (the first 3–6 letters of a word,
 * as someone types), and misspellings (a word of 5+ letters with one random edit — insertion,
 * deletion, substitution or swap of neighbours — that is not itself a word of the corpus).
 * The 150 most frequent words (the, you, that, …) are not chosen as query words: people do not
 * search for them, though phrases may contain them.
 */
const COMMON = new Set(vocabulary.slice(0, 150));
const KNOWN = new Set(vocabulary);
const LETTERS = "abcdefghijklmnopqrstuvwxyz";
const MIX = [
  ["word", 300],
  ["phrase", 250],
  ["prefix", 200],
  ["typo", 250],
];

const plain = (html) => html.replace(/<[^>]+>/g, " ");
const wordsOf = (text) => text.toLowerCase().match(/[a-z]+/g) ?? [];

/** @param {() => number} random @param {string} word */
function misspell(random, word) {
  for (let attempt = 0; attempt < 20; attempt++) {
    const i = Math.floor(random() * word.length);
    const letter = LETTERS[Math.floor(random() * 26)];
    const op = Math.floor(random() * 4);
    let typo;
    if (op === 0) typo = word.slice(0, i) + letter + word.slice(i);
    else if (op === 1) typo = word.slice(0, i) + word.slice(i + 1);
    else if (op === 2) typo = word.slice(0, i) + letter + word.slice(i + 1);
    else if (i < word.length - 1) typo = word.slice(0, i) + word[i + 1] + word[i] + word.slice(i + 2);
    else continue;
    if (typo !== word && !KNOWN.has(typo)) return typo;
  }
  return undefined;
}

/**
 * @param {number} articles corpus size (queries only use articles that exist)
 * @param {number} [count]
 * @param {number} [seed]
 * @returns {Array<{ kind: string, q: string, intended?: string }>}
 */
export function makeQueries(articles, count = 1000, seed = 0x9e3779b9) {
  const random = rng(seed);
  const pickArticle = () => article(Math.floor(random() * articles));
  const pickWord = (a, min) => {
    const source = random() < 0.4 ? a.title : plain(a.content);
    const candidates = wordsOf(source).filter((w) => w.length >= min && !COMMON.has(w));
    return candidates.length ? candidates[Math.floor(random() * candidates.length)] : undefined;
  };
  const out = [];
  const scale = count / 1000;
  for (const [kind, n] of MIX) {
    let made = 0;
    while (made < Math.round(n * scale)) {
      const a = pickArticle();
      if (kind === "word") {
        const w = pickWord(a, 4);
        if (!w) continue;
        out.push({ kind, q: w });
      } else if (kind === "phrase") {
        const words = wordsOf(plain(a.content));
        const length = 2 + Math.floor(random() * 2);
        const start = Math.floor(random() * Math.max(1, words.length - length));
        const phrase = words.slice(start, start + length);
        if (phrase.length < 2 || phrase.every((w) => COMMON.has(w))) continue;
        out.push({ kind, q: phrase.join(" ") });
      } else if (kind === "prefix") {
        const w = pickWord(a, 5);
        if (!w) continue;
        out.push({ kind, q: w.slice(0, 3 + Math.floor(random() * Math.min(4, w.length - 3))) });
      } else {
        const w = pickWord(a, 5);
        const typo = w && misspell(random, w);
        if (!typo) continue;
        out.push({ kind, q: typo, intended: w });
      }
      made++;
    }
  }
  // Interleave kinds deterministically so warm-up effects spread evenly.
  const order = rng(7);
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(order() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** Whether an article (corpus index) contains `word` as a whole word in title, tags or body. */
export function articleHasWord(n, word) {
  const a = article(n);
  return wordsOf(`${a.title} ${a.tags.join(" ")} ${plain(a.content)}`).includes(word);
}

/** Corpus index of a slug `article-<n>`. */
export const indexOfSlug = (slug) => Number(slug.slice("article-".length));
