/** Deterministic article data shared by the seeding script and the create load. */

export const TAGS = Array.from({ length: 30 }, (_, i) => `topic-${i}`);

const WORDS = (
  "vellum article content publishing headless plugin kernel queue sqlite cursor sanitize markup " +
  "editor draft review release archive search index webhook cache media backup restore metric"
).split(" ");

/** @param {number} i @param {number} n */
function words(i, n) {
  const out = [];
  for (let k = 0; k < n; k++) out.push(WORDS[(i * 31 + k * 7) % WORDS.length]);
  return out.join(" ");
}

/**
 * About 2 KB of ordinary article HTML (paragraphs, a heading, a list, a link, emphasis).
 * @param {number} i
 */
export function articleContent(i) {
  const paragraphs = [];
  for (let p = 0; p < 5; p++) paragraphs.push(`<p>${words(i + p, 40)} <em>${words(i, 2)}</em>.</p>`);
  return (
    `<h2>${words(i, 4)}</h2>${paragraphs.join("")}` +
    `<ul><li>${words(i, 6)}</li><li>${words(i + 1, 6)}</li></ul>` +
    `<p><a href="https://example.com/articles/${i}">Read more</a></p>`
  );
}

/**
 * @param {string} slug
 * @param {number} i
 */
export function articleBody(slug, i) {
  const tags = [...new Set([TAGS[i % TAGS.length], TAGS[(i * 7 + 3) % TAGS.length]])];
  return { title: `Article ${i}: ${words(i, 6)}`, slug, content: articleContent(i), tags };
}
