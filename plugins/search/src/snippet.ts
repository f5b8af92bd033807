import { porterStem } from "./text/porter.js";
import { normalize } from "./text/tokenize.js";

/** Words of body text a snippet shows. */
export const SNIPPET_TOKENS = 32;
/** Words shown before the first match of the window. */
const LEAD = 4;

const WORD_CHAR = /[\p{L}\p{M}\p{N}\p{Co}]/u;
const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);
}

function isWordCode(code: number, body: string, at: number): boolean {
  if (code < 128) return (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || (code >= 48 && code <= 57);
  return WORD_CHAR.test(body[at] as string);
}

/**
 * Word boundaries of `body` as start/end offsets in two shared typed arrays (snippets run for
 * every result, so they avoid allocating per word). Returns the number of words.
 */
let starts = new Int32Array(1024);
let ends = new Int32Array(1024);
function scanWords(body: string): number {
  let count = 0;
  let inWord = false;
  for (let i = 0; i < body.length; i++) {
    const word = isWordCode(body.charCodeAt(i), body, i);
    if (word === inWord) continue;
    if (word) {
      if (count === starts.length) {
        starts = grow(starts);
        ends = grow(ends);
      }
      starts[count] = i;
    } else {
      ends[count++] = i;
    }
    inWord = word;
  }
  if (inWord) ends[count++] = body.length;
  return count;
}

function grow(array: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> {
  const bigger = new Int32Array(array.length * 2);
  bigger.set(array);
  return bigger;
}

/** The matched stem of the word `body[start, end)`, or undefined. */
export type StemMatcher = (body: string, start: number, end: number) => string | undefined;

/**
 * Matches the way the index does: a body word matches when its Porter stem is one of the query's.
 * Porter only rewrites endings, so a word can share a stem only if it starts with the stem minus
 * its last letter; comparing those first letters in place skips stemming almost every word.
 */
export function stemMatcher(words: readonly string[]): StemMatcher {
  const stems = new Set(words.map((w) => porterStem(normalize(w))));
  const heads = [...stems].map((stem) => stem.slice(0, Math.max(1, stem.length - 1)));
  const startsWithHead = (body: string, start: number, end: number): boolean => {
    for (const head of heads) {
      if (head.length > end - start) continue;
      let j = 0;
      for (; j < head.length; j++) {
        let code = body.charCodeAt(start + j);
        if (code >= 65 && code <= 90) code += 32;
        if (code !== head.charCodeAt(j)) break;
      }
      if (j === head.length) return true;
    }
    return false;
  };
  return (body, start, end) => {
    if (body.charCodeAt(start) < 128 && !startsWithHead(body, start, end)) return undefined;
    const word = normalize(body.slice(start, end));
    let candidate = false;
    for (const head of heads) if (word.startsWith(head)) candidate = true;
    if (!candidate) return undefined;
    const stem = porterStem(word);
    return stems.has(stem) ? stem : undefined;
  };
}

/**
 * First word of the best window: windows start LEAD words before a match; the one holding the
 * most distinct matched stems wins, then the one with most matches, then the earliest.
 */
function bestWindow(positions: readonly number[], stems: readonly string[]): number {
  const inWindow = new Map<string, number>();
  let best = -1;
  let bestStart = 0;
  let right = 0;
  for (let left = 0; left < positions.length; left++) {
    const from = Math.max(0, (positions[left] as number) - LEAD);
    while (right < positions.length && (positions[right] as number) < from + SNIPPET_TOKENS) {
      const stem = stems[right] as string;
      inWindow.set(stem, (inWindow.get(stem) ?? 0) + 1);
      right++;
    }
    const score = inWindow.size * 1000 + (right - left);
    if (score > best) {
      best = score;
      bestStart = from;
    }
    const leaving = stems[left] as string;
    const remaining = (inWindow.get(leaving) ?? 1) - 1;
    if (remaining === 0) inWindow.delete(leaving);
    else inWindow.set(leaving, remaining);
  }
  return bestStart;
}

/**
 * About SNIPPET_TOKENS words of `body` around the best cluster of matches, as HTML: every match
 * in `<mark>`, everything else escaped. Without a match in the body, its beginning.
 */
export function makeSnippet(body: string, match: StemMatcher): string {
  const words = scanWords(body);
  const positions: number[] = [];
  const stems: string[] = [];
  for (let i = 0; i < words; i++) {
    const stem = match(body, starts[i] as number, ends[i] as number);
    if (stem === undefined) continue;
    positions.push(i);
    stems.push(stem);
  }
  const start = Math.min(bestWindow(positions, stems), Math.max(0, words - SNIPPET_TOKENS));
  const end = Math.min(words, start + SNIPPET_TOKENS);
  if (end === 0) return "";
  let html = start > 0 ? "…" : "";
  let at = start === 0 ? 0 : (starts[start] as number);
  for (const i of positions) {
    if (i < start || i >= end) continue;
    html += `${escapeHtml(body.slice(at, starts[i]))}<mark>${escapeHtml(body.slice(starts[i], ends[i]))}</mark>`;
    at = ends[i] as number;
  }
  if (end === words) return html + escapeHtml(body.slice(at));
  return `${html}${escapeHtml(body.slice(at, ends[end - 1]))}…`;
}
