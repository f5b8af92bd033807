/**
 * A search snippet: plain text with the matches in `<mark>…</mark>` and everything else
 * HTML-escaped (contract §6). Rendered as text nodes and `<mark>` elements, never as HTML.
 */
const ENTITIES: Record<string, string> = { "&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&#39;": "'" };
const unescape = (text: string) => text.replace(/&(?:amp|lt|gt|quot|#39);/g, (entity) => ENTITIES[entity] ?? entity);

export function Snippet({ text }: { text: string }) {
  const parts = text.split(/<\/?mark>/);
  return <>{parts.map((part, i) => (i % 2 === 1 ? <mark key={i}>{unescape(part)}</mark> : unescape(part)))}</>;
}
