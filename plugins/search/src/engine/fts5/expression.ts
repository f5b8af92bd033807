import type { TermGroup } from "../../query/plan.js";

/**
 * Builds FTS5 query syntax from planned words. Every word becomes a double-quoted string (quotes
 * doubled), so whatever it contains is text to FTS5, never an operator, column filter or prefix
 * marker.
 */
export function quote(word: string): string {
  return `"${word.replaceAll('"', '""')}"`;
}

export function groupExpression(group: TermGroup): string {
  const parts = group.words.map(quote);
  return parts.length === 1 ? (parts[0] as string) : `(${parts.join(" OR ")})`;
}

/** All groups required. */
export function matchExpression(groups: readonly TermGroup[]): string {
  return groups.map(groupExpression).join(" AND ");
}

/** Any of the words (similarity queries). */
export function anyOf(words: readonly string[]): string {
  return words.map(quote).join(" OR ");
}
