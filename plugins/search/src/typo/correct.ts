import { editDistance } from "./distance.js";
import { isCorrectable } from "./variants.js";

export interface Candidate {
  term: string;
  /** Documents containing the word. */
  docs: number;
}

/** Largest edit distance accepted for a word of this length. */
export function maxEdits(word: string): number {
  const length = [...word].length;
  if (length <= 4) return 1;
  return 2;
}

/** Candidates keeping the first letter count this many times (first letters are rarely mistyped). */
const SAME_START = 2;
/**
 * How likely a single edit is, relative to a forgotten letter or two swapped neighbours: typing a
 * wrong letter or an extra one means hitting one particular key out of the several near it.
 */
const WRONG_OR_EXTRA_LETTER = 1 / 8;

/** For a pair one edit apart: whether `typo` lacks a letter of `word` or has two of its neighbours swapped. */
function cheapEdit(typo: string, word: string): boolean {
  const t = Array.from(typo);
  const w = Array.from(word);
  if (w.length === t.length + 1) return true;
  if (w.length !== t.length) return false;
  const i = t.findIndex((c, k) => c !== w[k]);
  return (
    i >= 0 &&
    i + 1 < t.length &&
    t[i] === w[i + 1] &&
    t[i + 1] === w[i] &&
    t.slice(i + 2).join("") === w.slice(i + 2).join("")
  );
}

/**
 * Picks the correction for a word with no matches among vocabulary candidates (a noisy-channel
 * choice): the fewest edits first; then the highest weight, which is the candidate's document
 * count (how likely people mean it) times how likely the edit is (see WRONG_OR_EXTRA_LETTER),
 * doubled when the candidate keeps the first letter. Undefined when no candidate is close enough.
 */
export function chooseCorrection(word: string, candidates: readonly Candidate[]): Candidate | undefined {
  if (!isCorrectable(word)) return undefined;
  const limit = maxEdits(word);
  let best: { candidate: Candidate; distance: number; weight: number } | undefined;
  for (const candidate of candidates) {
    if (candidate.term === word || candidate.docs <= 0) continue;
    const distance = editDistance(word, candidate.term, limit);
    if (distance > limit) continue;
    const edit = distance === 1 && !cheapEdit(word, candidate.term) ? WRONG_OR_EXTRA_LETTER : 1;
    const weight = candidate.docs * edit * (candidate.term[0] === word[0] ? SAME_START : 1);
    if (!best || distance < best.distance || (distance === best.distance && weight > best.weight)) {
      best = { candidate, distance, weight };
    }
  }
  return best?.candidate;
}
