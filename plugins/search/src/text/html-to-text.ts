/**
 * Plain text of an article's (sanitized) HTML for indexing: tags removed, entities decoded,
 * control characters dropped and whitespace collapsed. Inline elements join their text with the
 * neighbouring text (`un<em>usual</em>` stays one word); block elements separate words.
 */

const INLINE = new Set([
  "a",
  "abbr",
  "b",
  "bdi",
  "bdo",
  "cite",
  "code",
  "data",
  "del",
  "dfn",
  "em",
  "i",
  "ins",
  "kbd",
  "mark",
  "q",
  "s",
  "samp",
  "small",
  "span",
  "strong",
  "sub",
  "sup",
  "time",
  "u",
  "var",
  "wbr",
]);

const NAMED: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: " ",
  ndash: "–",
  mdash: "—",
  hellip: "…",
  lsquo: "‘",
  rsquo: "’",
  ldquo: "“",
  rdquo: "”",
  laquo: "«",
  raquo: "»",
  copy: "©",
  reg: "®",
  trade: "™",
  deg: "°",
  middot: "·",
  bull: "•",
  times: "×",
  euro: "€",
  pound: "£",
  yen: "¥",
  cent: "¢",
  sect: "§",
  para: "¶",
};

const MARKUP =
  /<!--[\s\S]*?-->|<(script|style|template)\b[\s\S]*?<\/\1\s*>|<\/?([a-zA-Z][a-zA-Z0-9:-]*)(?:[^>"']|"[^"]*"|'[^']*')*>|<!?[^>]*>/g;
const ENTITY = /&(#\d{1,7}|#[xX][0-9a-fA-F]{1,6}|[a-zA-Z]{2,8});/g;
// Control characters (C0 except tab/newline, DEL, C1) never reach the index: the snippet markers use them.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g;

function decodeEntity(match: string, body: string): string {
  if (body[0] === "#") {
    const code = body[1] === "x" || body[1] === "X" ? Number.parseInt(body.slice(2), 16) : Number(body.slice(1));
    if (!Number.isInteger(code) || code <= 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return " ";
    return String.fromCodePoint(code);
  }
  return NAMED[body.toLowerCase()] ?? match;
}

/** Removes control characters and collapses whitespace runs (titles and tags go through this too). */
export function cleanText(text: string): string {
  return text.replace(CONTROL, " ").replace(/\s+/g, " ").trim();
}

export function htmlToText(html: string): string {
  const stripped = html.replace(MARKUP, (_match, _raw: string | undefined, tag: string | undefined) =>
    tag && INLINE.has(tag.toLowerCase()) ? "" : " ",
  );
  return cleanText(stripped.replace(ENTITY, decodeEntity));
}
