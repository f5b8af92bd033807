import { type ApiErrorDetail, checkSlug, validationFailed } from "@vellum/core";
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

type Reader<T> = (value: unknown, details: ApiErrorDetail[]) => T | undefined;

/** Records a problem with `field`; returns undefined so readers can `return reject(...)`. */
function reject(details: ApiErrorDetail[], field: string, message: string): undefined {
  details.push({ field, message });
  return undefined;
}

const readTitle: Reader<string> = (value, details) => {
  if (typeof value !== "string") return reject(details, "title", "must be a string");
  const title = value.trim();
  if (title.length === 0) return reject(details, "title", "must not be empty");
  if (chars(title) > TITLE_MAX_CHARS) {
    return reject(details, "title", `must be at most ${TITLE_MAX_CHARS} characters`);
  }
  return title;
};

const readSlug: Reader<string> = (value, details) => {
  if (typeof value !== "string") return reject(details, "slug", "must be a string");
  return checkSlug(value);
};

const readContent: Reader<string> = (value, details) => {
  if (typeof value !== "string") return reject(details, "content", "must be an HTML string");
  if (Buffer.byteLength(value, "utf8") > CONTENT_MAX_BYTES) {
    return reject(details, "content", `must be at most ${CONTENT_MAX_BYTES} bytes (1 MiB)`);
  }
  return value;
};

/** Tags: an array of at most 20 strings, each trimmed to 1–64 characters; duplicates dropped, order kept. */
const readTags: Reader<string[]> = (value, details) => {
  if (!Array.isArray(value)) return reject(details, "tags", "must be an array of strings");
  if (value.length > TAGS_MAX) {
    return reject(details, "tags", `must have at most ${TAGS_MAX} tags`);
  }
  const tags = new Set<string>();
  for (const [index, item] of value.entries()) {
    const field = `tags[${index}]`;
    const tag = typeof item === "string" ? item.trim() : undefined;
    if (tag === undefined) reject(details, field, "must be a string");
    else if (tag.length === 0 || chars(tag) > TAG_MAX_CHARS) {
      reject(details, field, `must be 1 to ${TAG_MAX_CHARS} characters after trimming`);
    } else tags.add(tag);
  }
  return [...tags];
};

const READERS: { [K in keyof ArticleInput]: Reader<ArticleInput[K]> } = {
  title: readTitle,
  slug: readSlug,
  content: readContent,
  tags: readTags,
};

/**
 * Reads the fields present in `body` (unknown fields are ignored). `required` fields must be
 * present. A string slug that is not a valid slug throws `invalid_slug` at once; every other
 * problem is collected into one `validation_failed` with a detail per field.
 */
function readFields(body: Record<string, unknown>, required: ReadonlyArray<keyof ArticleInput>): ArticlePatch {
  const details: ApiErrorDetail[] = [];
  const patch: ArticlePatch = {};
  for (const key of Object.keys(READERS) as Array<keyof ArticleInput>) {
    if (body[key] === undefined) {
      if (required.includes(key)) details.push({ field: key, message: "is required" });
      continue;
    }
    const value = READERS[key](body[key], details);
    if (value !== undefined) Object.assign(patch, { [key]: value });
  }
  if (details.length > 0) throw validationFailed(details);
  return patch;
}

/** A create body: title, slug and content required, tags optional (default none). */
export function parseCreate(body: Record<string, unknown>): ArticleInput {
  const fields = readFields(body, ["title", "slug", "content"]) as Omit<ArticleInput, "tags"> & { tags?: string[] };
  return { ...fields, tags: fields.tags ?? [] };
}

/** An update body: every field optional; omitted fields keep their values. */
export function parsePatch(body: Record<string, unknown>): ArticlePatch {
  return readFields(body, []);
}

/** The `tag` filter of the list: trimmed, 1–64 characters; absent means no filter. */
export function parseTagQuery(raw: string | null): string | undefined {
  if (raw === null) return undefined;
  const tag = raw.trim();
  if (tag.length === 0 || chars(tag) > TAG_MAX_CHARS) throw ArticleErrors.invalidTag();
  return tag;
}
