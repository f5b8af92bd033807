import type { PlanKind } from "../engine/types.js";
import { porterStem } from "../text/porter.js";
import { type Candidate, chooseCorrection } from "../typo/correct.js";
import type { ParsedQuery } from "./parse.js";

/** What the planner needs to know about the index's vocabulary (engine-neutral). */
export interface VocabularyLookup {
  /** Documents in the index. */
  documents: number;
  /** Estimated documents per Porter stem (the engine matches stems), for stems in the vocabulary. */
  stemDocs(stems: readonly string[]): Promise<Map<string, number>>;
  /** Most used words starting with `prefix`. */
  completions(prefix: string, limit: number): Promise<Candidate[]>;
  /** Documents the engine matches for `word`, counted up to `cap` (for words the vocabulary misses). */
  matchCount(word: string, cap: number): Promise<number>;
  correctionCandidates(word: string): Promise<Candidate[]>;
}

/** One required part of the query: any of `words`. */
export interface TermGroup {
  words: string[];
  /** Estimated documents matching the group (an upper bound). */
  docs: number;
}

export interface QueryPlan {
  kind: PlanKind;
  /** Groups that are all required (AND) and ranked. */
  groups: TermGroup[];
  /** For `window`: how many of the most recent matches are ranked. */
  window: number;
}

/**
 * bm25 costs about a microsecond per matching row and phrase (a phrase is one word of a group).
 * Queries whose estimated matches times phrases stay within this budget score every match;
 * broader ones score only as many of the most recent matches as the budget allows.
 */
export const RANK_BUDGET = 4000;
/** Words found in more documents than this and in over half of them carry no bm25 weight. */
export const SELECTIVE_MAX = 4000;
/** The fewest recent matches a broad query is ranked among. */
export const MIN_WINDOW = 200;
/** A typed prefix shorter than this is taken as a whole word. */
export const MIN_PREFIX = 2;
/** Distinct stems a typed prefix expands to (the most used first), out of the words read. */
export const COMPLETIONS = 4;
const COMPLETIONS_READ = 24;

/**
 * The last word while it is typed: the word itself (if known) and the most used words starting
 * with it, one per stem (FTS5 matches fire, fires, fired and firing alike).
 */
async function prefixGroup(word: string, lookup: VocabularyLookup): Promise<TermGroup | undefined> {
  if ([...word].length < MIN_PREFIX) return undefined;
  const found = await lookup.completions(word, COMPLETIONS_READ);
  if (found.length === 0) return undefined;
  const ordered = [word, ...found.map((c) => c.term).filter((term) => term !== word)];
  const docs = await lookup.stemDocs(ordered.map(porterStem));
  const stems = new Set<string>();
  const words: string[] = [];
  let total = 0;
  for (const term of ordered) {
    const stem = porterStem(term);
    if (stems.has(stem) || !docs.has(stem) || words.length >= COMPLETIONS) continue;
    stems.add(stem);
    words.push(term);
    total += docs.get(stem) ?? 0;
  }
  return words.length > 0 ? { words, docs: Math.min(lookup.documents, total) } : undefined;
}

/** A whole word; when nothing matches it, the closest vocabulary word instead. */
async function wordGroup(
  word: string,
  known: Map<string, number>,
  lookup: VocabularyLookup,
): Promise<TermGroup | undefined> {
  const docs = known.get(porterStem(word)) ?? (await lookup.matchCount(word, SELECTIVE_MAX + 1));
  if (docs > 0) return { words: [word], docs: Math.min(lookup.documents, docs) };
  const correction = chooseCorrection(word, await lookup.correctionCandidates(word));
  if (!correction) return undefined;
  const stem = porterStem(correction.term);
  const stemmed = (await lookup.stemDocs([stem])).get(stem) ?? correction.docs;
  return { words: [correction.term], docs: Math.min(lookup.documents, stemmed) };
}

/**
 * Turns parsed words into an execution plan. Every word is required. The last word, while typed,
 * stands for itself and its most used completions. A word with no match at all is corrected to
 * the closest vocabulary word (or the query has no results). Then the cost decides how to rank:
 * - `ranked`: estimated matches × phrases within RANK_BUDGET: bm25 over every match.
 * - `window`: broader: bm25 over the most recent matches, as many as the budget allows.
 * - `recent`: only words found in more than half of the documents (bm25 gives them no weight):
 *   newest first.
 * Groups in more than half of the documents are left out when rarer ones remain: bm25 weighs
 * them at zero, and scanning them costs more than all the rest.
 */
export async function planQuery(parsed: ParsedQuery, lookup: VocabularyLookup): Promise<QueryPlan> {
  const empty: QueryPlan = { kind: "empty", groups: [], window: 0 };
  if (parsed.terms.length === 0 || lookup.documents === 0) return empty;
  const known = await lookup.stemDocs(parsed.terms.map((t) => porterStem(t.text)));
  const groups: TermGroup[] = [];
  for (const term of parsed.terms) {
    const group =
      (term.prefix ? await prefixGroup(term.text, lookup) : undefined) ?? (await wordGroup(term.text, known, lookup));
    if (!group) return empty;
    groups.push(group);
  }
  const half = lookup.documents / 2;
  const weightless = (g: TermGroup) => g.docs > half && g.docs > SELECTIVE_MAX;
  const weighted = groups.filter((g) => !weightless(g));
  if (weighted.length === 0) return { kind: "recent", groups, window: 0 };
  const phrases = weighted.reduce((sum, g) => sum + g.words.length, 0);
  const matches = Math.min(...weighted.map((g) => g.docs));
  if (matches * phrases <= RANK_BUDGET) return { kind: "ranked", groups: weighted, window: 0 };
  return { kind: "window", groups: weighted, window: Math.max(MIN_WINDOW, Math.floor(RANK_BUDGET / phrases)) };
}
