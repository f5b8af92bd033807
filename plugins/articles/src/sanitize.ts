import sanitizeHtml from "sanitize-html";

/** Tags kept in article content (contract §5); everything else is dropped, its text kept escaped. */
// A flat list reads better.
// prettier-ignore
export const ALLOWED_TAGS: readonly string[] = [
  "h1", "h2", "h3", "h4", "h5", "h6", "p", "br", "hr", "div", "span", "ul", "ol", "li", "dl", "dt", "dd",
  "a", "img", "figure", "figcaption", "blockquote", "q", "cite", "pre", "code", "kbd", "samp", "var",
  "table", "caption", "colgroup", "col", "thead", "tbody", "tfoot", "tr", "th", "td", "em", "strong", "b",
  "i", "u", "s", "del", "ins", "sub", "sup", "small", "mark", "abbr", "time",
];

/** Attributes kept per tag. No `style`, `id`, `name`, event handler or `srcset` anywhere. */
const ALLOWED_ATTRIBUTES: Record<string, string[]> = {
  a: ["href", "title", "rel"],
  img: ["src", "alt", "title", "width", "height"],
  blockquote: ["cite"],
  q: ["cite"],
  del: ["cite", "datetime"],
  ins: ["cite", "datetime"],
  time: ["datetime"],
  abbr: ["title"],
  ol: ["start", "reversed", "type"],
  li: ["value"],
  th: ["colspan", "rowspan", "scope"],
  td: ["colspan", "rowspan"],
  col: ["span"],
  colgroup: ["span"],
};

/**
 * Disallowed elements whose whole content goes too: raw-text and template elements, and SVG and
 * MathML subtrees (their parsing rules differ from HTML's, the root of most mutation-XSS tricks).
 */
// A flat list reads better.
// prettier-ignore
const DROP_WITH_CONTENT = [
  "script", "style", "textarea", "option", "select", "xmp", "noscript", "noembed", "noframes", "iframe",
  "frameset", "object", "applet", "template", "title", "plaintext", "svg", "math",
];

const LINK_REL = "noopener noreferrer";
const HTTP = ["http", "https"];
/** Schemes allowed in each URL attribute, by tag; a tag absent here keeps its URL attributes only when http(s). */
const URL_SCHEMES: Record<string, string[]> = { a: [...HTTP, "mailto"] };
const URL_ATTRIBUTES = ["href", "src", "cite"];
/** Whitespace, control and invisible format characters, which some parsers skip inside a scheme. */
const INVISIBLE = /[\p{White_Space}\p{Cc}\p{Cf}]/gu;
const SCHEME = /^([a-z][a-z0-9+.-]*):/i;
/** Where relative image sources are resolved for the media check (never fetched). */
const RESOLVE_BASE = "http://vellum.invalid/";
const RESOLVE_ORIGIN = "http://vellum.invalid";

/**
 * A URL is kept only when, with every invisible character removed, it has an allowed scheme, or
 * none at all and is not protocol-relative. This backs up sanitize-html's own scheme check,
 * which only ignores ASCII whitespace (e.g. `\u2028javascript:` passes it).
 */
function urlAllowed(value: string, schemes: readonly string[]): boolean {
  const compact = value.replace(INVISIBLE, "");
  const scheme = SCHEME.exec(compact)?.[1];
  if (scheme !== undefined) return schemes.includes(scheme.toLowerCase());
  return !/^[\\/]{2}/.test(compact);
}

export interface SanitizeOptions {
  /** Path prefix of this service's media URLs, allowed as relative image sources (e.g. `/media/`). */
  mediaPrefix: string;
}

/**
 * Sanitizes article HTML. `mountPrefix` is the path Vellum is mounted under for the writer
 * (`/cms`): media sources under it (`/cms/media/…`) are this service's media too.
 */
export type Sanitizer = (html: string, mountPrefix?: string) => string;

/** Builds the content sanitizer: sanitize-html with the explicit allowlist of contract §5. */
export function createSanitizer(options: SanitizeOptions): Sanitizer {
  /** The mount prefix of the call in progress (sanitizing is synchronous: one call at a time). */
  let mount = "";
  const isMedia = (pathname: string) =>
    pathname.startsWith(options.mediaPrefix) || (mount !== "" && pathname.startsWith(`${mount}${options.mediaPrefix}`));
  /**
   * Images load only from absolute http(s) URLs or this service's media. A relative source is
   * resolved first, the way a browser will (dot segments, `%2e`, backslashes), and kept in that
   * resolved form only when it is still under the media prefix: `/media/../api/v1/articles` would
   * otherwise make every reader's browser send a same-origin GET to any path.
   */
  const imageSource = (src: string): string | undefined => {
    const value = src.trim();
    if (/^https?:\/\//i.test(value)) return value;
    const resolved = URL.parse(value, RESOLVE_BASE);
    if (!resolved || resolved.origin !== RESOLVE_ORIGIN) return undefined;
    const path = `${resolved.pathname}${resolved.search}${resolved.hash}`;
    return isMedia(resolved.pathname) ? path : undefined;
  };
  const transform = (tagName: string, attribs: sanitizeHtml.Attributes): sanitizeHtml.Tag => {
    const next = { ...attribs };
    for (const name of URL_ATTRIBUTES) {
      const value = next[name];
      if (value !== undefined && !urlAllowed(value, URL_SCHEMES[tagName] ?? HTTP)) delete next[name];
    }
    if (tagName === "img" && next.src !== undefined) {
      const source = imageSource(next.src);
      if (source === undefined) delete next.src;
      else next.src = source;
    }
    if (tagName === "a") next.rel = LINK_REL;
    return { tagName, attribs: next };
  };
  const config: sanitizeHtml.IOptions = {
    allowedTags: [...ALLOWED_TAGS],
    allowedAttributes: ALLOWED_ATTRIBUTES,
    allowedClasses: { code: ["language-*"], pre: ["language-*"] },
    allowedSchemes: HTTP,
    allowedSchemesByTag: URL_SCHEMES,
    allowedSchemesAppliedToAttributes: URL_ATTRIBUTES,
    allowProtocolRelative: false,
    allowedStyles: {},
    selfClosing: ["img", "br", "hr", "col"],
    disallowedTagsMode: "discard",
    nonTextTags: DROP_WITH_CONTENT,
    enforceHtmlBoundary: false,
    transformTags: { "*": transform },
  };
  return (html, mountPrefix = "") => {
    mount = mountPrefix;
    try {
      return sanitizeHtml(html, config);
    } finally {
      mount = "";
    }
  };
}
