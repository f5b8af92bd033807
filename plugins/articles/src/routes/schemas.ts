import { type RouteSchema, slugSchema, type TObject, Type } from "@vellum/core";
import { CONTENT_MAX_BYTES, TAG_MAX_CHARS, TAGS_MAX, TITLE_MAX_CHARS } from "../validation.js";

const tag = Type.String({ description: `1 to ${TAG_MAX_CHARS} characters after trimming; duplicates are dropped` });

/** The writable fields; what JSON Schema cannot say (trimming, UTF-8 bytes) is in the descriptions. */
const fields = {
  title: Type.String({ minLength: 1, description: `1 to ${TITLE_MAX_CHARS} characters after trimming` }),
  slug: slugSchema(),
  content: Type.String({
    description: `HTML, at most ${CONTENT_MAX_BYTES} bytes of UTF-8; sanitized before it is stored`,
  }),
  tags: Type.Array(tag, { maxItems: TAGS_MAX }),
};

const summaryFields = {
  id: Type.String({ description: "A ULID: creation order" }),
  title: Type.String(),
  slug: Type.String(),
  tags: Type.Array(Type.String()),
  created_at: Type.String({ description: "ISO 8601, UTC" }),
  updated_at: Type.String({ description: "ISO 8601, UTC" }),
};

const Summary = Type.Object(summaryFields);
const Article = Type.Object({ ...summaryFields, content: Type.String({ description: "Sanitized HTML" }) });
const slugParam: TObject = Type.Object({ slug: slugSchema() });

export const listSchema: RouteSchema = {
  summary: "Articles, newest first, a page at a time",
  tags: ["articles"],
  query: Type.Object({
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    tag: Type.Optional(Type.String({ description: "Only articles with this tag" })),
    cursor: Type.Optional(Type.String({ description: "The `next_cursor` of the previous page" })),
  }),
  response: {
    200: {
      description: "A page; `next_cursor` is null on the last one",
      body: Type.Object({ articles: Type.Array(Summary), next_cursor: Type.Union([Type.String(), Type.Null()]) }),
    },
  },
};

export const getSchema: RouteSchema = {
  summary: "One article by its slug",
  description: "A slug whose create is still queued is applied first: an acknowledged slug never answers 404.",
  tags: ["articles"],
  params: slugParam,
  response: { 200: { description: "The article", body: Article }, 404: { description: "No such article" } },
};

export const createSchema: RouteSchema = {
  summary: "Queue the create of an article",
  description: "Answered once the queued write is committed; follow it with `GET /api/v1/jobs/{id}`.",
  tags: ["articles"],
  body: Type.Object({
    title: fields.title,
    slug: fields.slug,
    content: fields.content,
    tags: Type.Optional(fields.tags),
  }),
  response: {
    202: {
      description: "Queued",
      body: Type.Object({ id: Type.String(), status: Type.Literal("queued") }),
      headers: { Location: "The article's URL" },
    },
    409: { description: "The slug exists or a queued write claims it" },
    503: {
      description: "The write queue is full, the data disk is full, or another process locks the database",
      headers: { "Retry-After": "Seconds to wait" },
    },
  },
};

export const updateSchema: RouteSchema = {
  summary: "Update an article: omitted fields keep their values; a new `slug` renames it",
  tags: ["articles"],
  params: slugParam,
  body: Type.Object({
    title: Type.Optional(fields.title),
    slug: Type.Optional(fields.slug),
    content: Type.Optional(fields.content),
    tags: Type.Optional(fields.tags),
  }),
  response: {
    200: { description: "The updated article", body: Article },
    404: { description: "No such article" },
    409: { description: "The new slug is taken" },
  },
};

export const deleteSchema: RouteSchema = {
  summary: "Delete an article",
  tags: ["articles"],
  params: slugParam,
  response: { 204: { description: "Deleted" }, 404: { description: "No such article" } },
};
