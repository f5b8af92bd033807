/**
 * Deletion neighbourhoods (the SymSpell idea). The index stores, for every vocabulary word, the
 * word itself and each string made by deleting one character. Two words within one insertion,
 * deletion, substitution or transposition of each other always share an entry, so the candidates
 * for a misspelling are found with a handful of exact index lookups instead of a scan.
 */

/** Words shorter than this are too ambiguous to correct; longer ones are not words. */
export const MIN_CORRECTABLE_LENGTH = 3;
export const MAX_CORRECTABLE_LENGTH = 24;

/** Whether a vocabulary word takes part in typo correction (letters only, sensible length). */
export function isCorrectable(word: string): boolean {
  const length = [...word].length;
  return length >= MIN_CORRECTABLE_LENGTH && length <= MAX_CORRECTABLE_LENGTH && !/\p{N}/u.test(word);
}

/** The word and every distinct one-character deletion of it. */
export function deletionVariants(word: string): string[] {
  const chars = Array.from(word);
  const variants = new Set<string>([word]);
  for (let i = 0; i < chars.length; i++) variants.add(chars.slice(0, i).join("") + chars.slice(i + 1).join(""));
  return [...variants];
}
