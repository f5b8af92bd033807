// @ts-check
import { Refusal } from "./refusal.mjs";

/*
 * An SVG is rasterized only if its text passes these checks; librsvg runs no script, and with the SVG read
 * from a buffer it has no base URL to resolve a relative or `file:` reference against, but the policy
 * refuses anything that could load outside the document rather than trust that.
 */

const SVG_NAMESPACE = "http://www.w3.org/2000/svg";
/** The XML declaration, first if present. */
const XML_DECLARATION = /^<\?xml\s([^?]*)\?>/;
/** Another encoding (UTF-7, UTF-16…) could spell markup that the checks below, on UTF-8 text, do not see. */
const ENCODING = /\bencoding\s*=\s*["']([^"']*)["']/;
/** Whitespace and comments before the root element. */
const PROLOG = /^(?:\s+|<!--[\s\S]*?-->)*/;
/** The root's start tag: `<svg` and its attributes. */
const ROOT = /^<svg((?:\s+[^\s=<>"'/]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*\/?>/;
const ATTRIBUTE = /([^\s=<>"'/]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g;
/** @type {[RegExp, string][]} Markup refused anywhere in the document, comments included. */
const REFUSED = [
  [/<!(?!--|\[CDATA\[)/, "a DOCTYPE or entity declaration"],
  [/<\?/, "a processing instruction"],
  [/<\s*(?:[^\s<>/:]+:)?(?:script|foreignObject)\b/i, "a script or foreignObject element"],
  [/@import/i, "a CSS @import"],
  [/\\/, "a backslash (a CSS escape could spell a reference)"],
];
/**
 * Every attribute, or text that looks like one, and its value (quoted, or nothing). The value is looked
 * at, not consumed, so that text such as `x="` cannot swallow the attribute that follows it.
 */
const ANY_ATTRIBUTE = /(?<![^\s"'])([^\s=<>"'/]+)\s*=\s*(?=("[^"]*"|'[^']*'|))/g;
/** The local names of the attributes that refer to something: `href` (`xlink:href` or any prefix) and `src`. */
const REFERENCE_NAMES = new Set(["href", "src"]);
/** CSS `url(…)` and the first character of its target, which may only be `#` (a fragment). */
const URL_FUNCTION = /url\(\s*["']?(.?)/gi;
/** What librsvg renders of a `data:` URI: a base64 PNG or JPEG, whose pixels are counted before rendering. */
const EMBEDDED_IMAGE = /^data:image\/(png|jpeg);base64,([A-Za-z0-9+/=\s]*)$/i;

/** @param {string} why */
function refuse(why) {
  return new Refusal("invalid", `SVG refused: ${why}`);
}

/** @param {string} text */
function attributes(text) {
  return new Map([...text.matchAll(ATTRIBUTE)].map((match) => [match[1], match[2] ?? match[3]]));
}

/**
 * Checks an SVG: UTF-8, a root `<svg>` element in the SVG namespace, no DOCTYPE or entity declaration,
 * no processing instruction, no `<script>` or `<foreignObject>`, no CSS `@import` or escape, and every
 * `href`/`src` a same-document `#fragment` or a base64 PNG or JPEG `data:` URI, every `url()` a `#fragment`.
 * Returns the embedded images, to be probed for their size; throws a `Refusal` (`invalid`) otherwise.
 * @param {Buffer} bytes
 * @returns {{ format: string, bytes: Buffer }[]}
 */
export function checkSvg(bytes) {
  let text;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw refuse("not UTF-8 text");
  }
  const declaration = XML_DECLARATION.exec(text);
  if (declaration) {
    const encoding = ENCODING.exec(declaration[1] ?? "")?.[1];
    if (encoding !== undefined && encoding.toLowerCase() !== "utf-8") throw refuse(`encoding ${encoding}`);
    text = text.slice(declaration[0].length);
  }
  for (const [pattern, what] of REFUSED) if (pattern.test(text)) throw refuse(`it contains ${what}`);
  const root = ROOT.exec(text.slice(PROLOG.exec(text)?.[0].length));
  if (!root || attributes(root[1] ?? "").get("xmlns") !== SVG_NAMESPACE) {
    throw refuse("the root is not an <svg> element in the SVG namespace");
  }
  for (const [, first] of text.matchAll(URL_FUNCTION)) {
    if (first !== "#") throw refuse("a url() refers outside the document");
  }
  const embedded = [];
  for (const [, name = "", quoted = ""] of text.matchAll(ANY_ATTRIBUTE)) {
    if (!REFERENCE_NAMES.has(name.slice(name.lastIndexOf(":") + 1).toLowerCase())) continue;
    const value = quoted.slice(1, -1);
    if (value.startsWith("#")) continue;
    const image = EMBEDDED_IMAGE.exec(value);
    if (!image) throw refuse(`an ${name} refers outside the document`);
    embedded.push({ format: (image[1] ?? "").toLowerCase(), bytes: Buffer.from(image[2] ?? "", "base64") });
  }
  return embedded;
}
