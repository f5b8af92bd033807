import { type ApiErrorDetail, validationFailed } from "@vellum/core";
import { ArticleErrors } from "./errors.js";

/** Article and job ids: ULIDs in Crockford base32. */
export const ULID_PATTERN = /^[0-9A-HJKMNP-TV-Z]{26}$/;
export const TITLE_MAX_CHARS = 300;
export const CONTENT_MAX_BYTES = 1024 * 1024;
export const TAGS_MAX = 20;
export const TAG_MAX_CHARS = 64;

/** The writable fields of an article, validated (content not yet sanitized). */
export interface ArticleInput {
  title: string;
  slug: string;
  content: string;
  tags: string[];
}

export type ArticlePatch = Partial<ArticleInput>;

/** Length in code points, so an emoji counts as one character. */
const chars = (value: string) => [...value].length;

/**
 * The writable fields present in `body`, checked beyond the route schema the kernel validated
 * the body against (types, required fields, the slug's form, at most 20 tags): titles and tags
 * are trimmed and measured after trimming, content is measured in UTF-8 bytes, duplicate tags are
 * dropped (order kept). Unknown fields are ignored. Every problem goes into one
 * `validation_failed` with a detail per field.
 */
function readFields(body: Record<string, unknown>): ArticlePatch {
  const input = body as ArticlePatch;
  const details: ApiErrorDetail[] = [];
  const patch: ArticlePatch = {};
  if (input.title !== undefined) {
    const title = input.title.trim();
    if (title.length === 0) details.push({ field: "title", message: "must not be empty" });
    else if (chars(title) > TITLE_MAX_CHARS) {
      details.push({ field: "title", message: `must be at most ${TITLE_MAX_CHARS} characters` });
    } else patch.title = title;
  }
  if (input.slug !== undefined) patch.slug = input.slug;
  if (input.content !== undefined) {
    if (Buffer.byteLength(input.content, "utf8") > CONTENT_MAX_BYTES) {
      details.push({ field: "content", message: `must be at most ${CONTENT_MAX_BYTES} bytes (1 MiB)` });
    } else patch.content = input.content;
  }
  if (input.tags !== undefined) {
    const tags = new Set<string>();
    for (const [index, item] of input.tags.entries()) {
      const tag = item.trim();
      if (tag.length === 0 || chars(tag) > TAG_MAX_CHARS) {
        details.push({ field: `tags[${index}]`, message: `must be 1 to ${TAG_MAX_CHARS} characters after trimming` });
      } else tags.add(tag);
    }
    patch.tags = [...tags];
  }
  if (details.length > 0) throw validationFailed(details);
  return patch;
}

/** A create body (title, slug and content present, as its schema requires); tags default to none. */
export function parseCreate(body: Record<string, unknown>): ArticleInput {
  const fields = readFields(body) as Omit<ArticleInput, "tags"> & { tags?: string[] };
  return { ...fields, tags: fields.tags ?? [] };
}

/** An update body: every field optional; omitted fields keep their values. */
export function parsePatch(body: Record<string, unknown>): ArticlePatch {
  return readFields(body);
}

/** The `tag` filter of the list: trimmed, 1–64 characters; absent means no filter. */
export function parseTagQuery(raw: string | null): string | undefined {
  if (raw === null) return undefined;
  const tag = raw.trim();
  if (tag.length === 0 || chars(tag) > TAG_MAX_CHARS) throw ArticleErrors.invalidTag();
  return tag;
}
