/**
 * The Porter stemming algorithm (M. F. Porter, 1980), as FTS5's `porter` tokenizer applies it:
 * to lower-case ASCII words longer than two letters. The planner uses it to tell which prefix
 * completions FTS5 would treat as the same term (fire, fires, fired, firing), so a completion group
 * holds one word per stem. Being off for an odd word costs a little speed, never a wrong result.
 */

const isVowelAt = (w: string, i: number): boolean => {
  const c = w[i];
  if (c === "a" || c === "e" || c === "i" || c === "o" || c === "u") return true;
  return c === "y" && i > 0 && !isVowelAt(w, i - 1);
};

/** m in [C](VC)^m[V]: the number of vowel-consonant sequences. */
function measure(stem: string): number {
  let m = 0;
  let i = 0;
  while (i < stem.length && !isVowelAt(stem, i)) i++;
  while (i < stem.length) {
    while (i < stem.length && isVowelAt(stem, i)) i++;
    if (i >= stem.length) break;
    while (i < stem.length && !isVowelAt(stem, i)) i++;
    m++;
  }
  return m;
}

function hasVowel(stem: string): boolean {
  for (let i = 0; i < stem.length; i++) if (isVowelAt(stem, i)) return true;
  return false;
}

const endsDouble = (w: string): boolean =>
  w.length > 1 && w[w.length - 1] === w[w.length - 2] && !isVowelAt(w, w.length - 1);

/** Consonant-vowel-consonant at the end, the last consonant not w, x or y. */
function endsCvc(w: string): boolean {
  const n = w.length;
  if (n < 3) return false;
  const last = w[n - 1] as string;
  return !isVowelAt(w, n - 3) && isVowelAt(w, n - 2) && !isVowelAt(w, n - 1) && !"wxy".includes(last);
}

type Rule = readonly [suffix: string, replacement: string];

/** Replaces the first matching suffix when the remaining stem satisfies `condition`. */
function applyRules(w: string, rules: readonly Rule[], condition: (stem: string) => boolean): string {
  for (const [suffix, replacement] of rules) {
    if (!w.endsWith(suffix)) continue;
    const stem = w.slice(0, w.length - suffix.length);
    return condition(stem) ? stem + replacement : w;
  }
  return w;
}

const STEP2: Rule[] = [
  ["ational", "ate"],
  ["tional", "tion"],
  ["enci", "ence"],
  ["anci", "ance"],
  ["izer", "ize"],
  ["bli", "ble"],
  ["alli", "al"],
  ["entli", "ent"],
  ["eli", "e"],
  ["ousli", "ous"],
  ["ization", "ize"],
  ["ation", "ate"],
  ["ator", "ate"],
  ["alism", "al"],
  ["iveness", "ive"],
  ["fulness", "ful"],
  ["ousness", "ous"],
  ["aliti", "al"],
  ["iviti", "ive"],
  ["biliti", "ble"],
  ["logi", "log"],
];
const STEP3: Rule[] = [
  ["icate", "ic"],
  ["ative", ""],
  ["alize", "al"],
  ["iciti", "ic"],
  ["ical", "ic"],
  ["ful", ""],
  ["ness", ""],
];
const STEP4 = [
  "al",
  "ance",
  "ence",
  "er",
  "ic",
  "able",
  "ible",
  "ant",
  "ement",
  "ment",
  "ent",
  "ion",
  "ou",
  "ism",
  "ate",
  "iti",
  "ous",
  "ive",
  "ize",
];

function step1(word: string): string {
  let w = word;
  if (w.endsWith("sses")) w = w.slice(0, -2);
  else if (w.endsWith("ies")) w = w.slice(0, -2);
  else if (!w.endsWith("ss") && w.endsWith("s")) w = w.slice(0, -1);

  let tidy = false;
  if (w.endsWith("eed")) {
    if (measure(w.slice(0, -3)) > 0) w = w.slice(0, -1);
  } else if (w.endsWith("ed") && hasVowel(w.slice(0, -2))) {
    w = w.slice(0, -2);
    tidy = true;
  } else if (w.endsWith("ing") && hasVowel(w.slice(0, -3))) {
    w = w.slice(0, -3);
    tidy = true;
  }
  if (tidy) {
    if (w.endsWith("at") || w.endsWith("bl") || w.endsWith("iz")) w += "e";
    else if (endsDouble(w) && !/[lsz]$/.test(w)) w = w.slice(0, -1);
    else if (measure(w) === 1 && endsCvc(w)) w += "e";
  }
  if (w.endsWith("y") && hasVowel(w.slice(0, -1))) w = `${w.slice(0, -1)}i`;
  return w;
}

function step4(w: string): string {
  for (const suffix of STEP4) {
    if (!w.endsWith(suffix)) continue;
    const stem = w.slice(0, w.length - suffix.length);
    if (measure(stem) <= 1) return w;
    if (suffix === "ion" && !/[st]$/.test(stem)) return w;
    return stem;
  }
  return w;
}

function step5(word: string): string {
  let w = word;
  if (w.endsWith("e")) {
    const stem = w.slice(0, -1);
    const m = measure(stem);
    if (m > 1 || (m === 1 && !endsCvc(stem))) w = stem;
  }
  if (measure(w) > 1 && endsDouble(w) && w.endsWith("l")) w = w.slice(0, -1);
  return w;
}

export function porterStem(word: string): string {
  if (word.length <= 2 || !/^[a-z]+$/.test(word)) return word;
  let w = step1(word);
  w = applyRules(w, STEP2, (stem) => measure(stem) > 0);
  w = applyRules(w, STEP3, (stem) => measure(stem) > 0);
  return step5(step4(w));
}
