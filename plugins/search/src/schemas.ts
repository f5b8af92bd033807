import { type ResponseSchema, type RouteSchema, type Static, slugSchema, type TSchema, Type } from "@vellum/core";

// What the search routes accept and answer, as the kernel validates it and the OpenAPI reference
// documents it. Objects stay open (no `additionalProperties: false`). The handlers read the query
// integers the kernel has checked with `intQuery`, for their defaults.

export const MAX_QUERY_LENGTH = 256;
export const MAX_OFFSET = 10_000;
export const MAX_LIMIT = 100;
export const MAX_SUGGESTIONS = 20;
export const MAX_TITLE = 300;
export const MAX_CONTENT = 1024 * 1024;
export const MAX_TAGS = 20;

const Timestamp = Type.String({ format: "date-time" });
const Count = Type.Integer({ minimum: 0 });
const Nullable = (schema: TSchema, description?: string) =>
  Type.Union([schema, Type.Null()], description === undefined ? {} : { description });

const SearchHit = Type.Object({
  id: Type.String(),
  slug: Type.String(),
  title: Type.String(),
  tags: Type.Array(Type.String()),
  snippet: Type.String({ description: "HTML: the matched words in `<mark>`, everything else escaped" }),
  score: Type.Number({ description: "bm25 relevance, higher is better; `0` for the newest-first plan" }),
  created_at: Timestamp,
  updated_at: Timestamp,
});

const SearchResponse = Type.Object({
  results: Type.Array(SearchHit),
  total: Count,
  limit: Type.Integer({ minimum: 1, maximum: MAX_LIMIT }),
  offset: Type.Integer({ minimum: 0, maximum: MAX_OFFSET }),
  degraded: Type.Optional(
    Type.Literal(true, { description: "Only when the index is missing or unusable: no results, `total` 0" }),
  ),
});

/** The `429` of a route with a rate limit (the search plugin's `rateLimit` option, on by default). */
const RATE_LIMITED: ResponseSchema = {
  description: "Over the rate limit (per client IP)",
  headers: { "Retry-After": "Seconds until the window resets" },
};

const withRateLimit = (rateLimited: boolean, responses: RouteSchema["response"]): RouteSchema["response"] =>
  rateLimited ? { ...responses, 429: RATE_LIMITED } : responses;

export const searchSchema = (rateLimited: boolean): RouteSchema => ({
  summary: "Full-text search over articles, best match first",
  description:
    "The query is used for this response only: never logged, stored or cached, and a rejection never repeats it.",
  tags: ["search"],
  query: Type.Object({
    q: Type.String({
      minLength: 1,
      maxLength: MAX_QUERY_LENGTH,
      description: `The words to find, 1 to ${MAX_QUERY_LENGTH} characters (code points); plain text, never query syntax`,
    }),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIMIT, default: 20, description: "Page size" })),
    offset: Type.Optional(
      Type.Integer({ minimum: 0, maximum: MAX_OFFSET, default: 0, description: "Results to skip" }),
    ),
  }),
  response: withRateLimit(rateLimited, {
    200: {
      description: "A page of results, with `Cache-Control: no-store`; `degraded: true` when the index is unusable",
      body: SearchResponse,
      headers: { "Cache-Control": "`no-store`" },
    },
    400: { description: "`invalid_parameter`: `q`, `limit` or `offset` out of range" },
  }),
});

const ReindexProgress = Type.Object({
  done: Count,
  total: Nullable(Count, "Articles expected, counted when the rebuild started"),
});

const ReindexStatus = {
  state: Type.Enum(["idle", "running"], { description: "Whether this process is rebuilding" }),
  progress: Nullable(ReindexProgress, "While this process rebuilds, once it counted the articles"),
  started_at: Nullable(Timestamp, "When this process's running rebuild started"),
  last: Nullable(
    Type.Object({
      finished_at: Timestamp,
      ok: Type.Boolean(),
      documents: Type.Optional(Count),
      duration_ms: Type.Optional(Type.Number({ minimum: 0 })),
      generation: Type.Optional(Type.Integer()),
    }),
    "How this process's last rebuild ended (`documents`, `duration_ms`, `generation` when it succeeded)",
  ),
};

const ReindexStarted = Type.Object({
  status: Type.Enum(["started", "running"], {
    description: "`started` now, or `running` already (in this process or another one)",
  }),
  ...ReindexStatus,
  generation: Type.Optional(
    Nullable(Type.Integer(), "With `running`: the generation being built, when the index records one"),
  ),
});

const ReindexReport = Type.Object({
  ...ReindexStatus,
  index: Type.Object({
    state: Type.Enum(["ok", "missing", "broken"]),
    generation: Nullable(Type.Integer(), "The live generation"),
    documents: Count,
    indexed_at: Nullable(Timestamp, "The last change to the live generation (a write or a swap)"),
  }),
  building: Nullable(
    Type.Object({
      generation: Type.Integer(),
      documents: Count,
      startedAt: Timestamp,
      heartbeatAt: Timestamp,
      alive: Type.Boolean({ description: "Its builder (any process) still sends heartbeats" }),
    }),
    "A generation being built, by any process",
  ),
});

export const startReindexSchema: RouteSchema = {
  summary: "Start rebuilding the search index in the background",
  description: "Search and article writes keep working; the new index replaces the live one atomically.",
  tags: ["search"],
  response: {
    202: { description: "The rebuild started, or one is running already", body: ReindexStarted },
    503: { description: "`service_unavailable`: the articles plugin is not installed, so there is nothing to index" },
  },
};

export const reindexStatusSchema: RouteSchema = {
  summary: "Progress of a rebuild of the search index, and how the last one went",
  tags: ["search"],
  response: { 200: { description: "The rebuild's state and the live index", body: ReindexReport } },
};

const RelatedHit = Type.Object({
  id: Type.String(),
  slug: Type.String(),
  title: Type.String(),
  tags: Type.Array(Type.String()),
  score: Type.Number(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const relatedSchema = (rateLimited: boolean): RouteSchema => ({
  summary: "Articles most similar to this one, by the index's terms (beta, `SERVICE_FEATURES=ai`)",
  tags: ["ai"],
  params: Type.Object({ slug: slugSchema("The article's slug") }),
  query: Type.Object({
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_SUGGESTIONS, default: 5, description: "Most results" }),
    ),
  }),
  response: withRateLimit(rateLimited, {
    200: {
      description: "The article's most characteristic words and the articles that share them, best first",
      body: Type.Object({ slug: Type.String(), terms: Type.Array(Type.String()), results: Type.Array(RelatedHit) }),
    },
    400: { description: "`invalid_slug`, or `invalid_parameter` for `limit`" },
    404: { description: "No indexed article has this slug" },
    503: { description: "The search index is unavailable (being rebuilt)" },
  }),
});

const SuggestTagsBody = Type.Object({
  title: Type.Optional(Type.String({ maxLength: MAX_TITLE })),
  content: Type.Optional(Type.String({ maxLength: MAX_CONTENT, description: "HTML" })),
  tags: Type.Optional(
    Type.Array(Type.String(), { maxItems: MAX_TAGS, description: "Tags already chosen: never suggested" }),
  ),
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: MAX_SUGGESTIONS, default: 5, description: "Most suggestions" }),
  ),
});

export type SuggestTagsInput = Static<typeof SuggestTagsBody>;

export const suggestTagsSchema = (rateLimited: boolean): RouteSchema => ({
  summary: "Tags already used on this site that fit a text, best first (beta, `SERVICE_FEATURES=ai`)",
  description:
    "Computed from the index; nothing leaves the process. `title` or `content` must hold more than white space: " +
    "without either the answer is `validation_failed` with `content`: `title or content is required`.",
  tags: ["ai"],
  body: SuggestTagsBody,
  response: withRateLimit(rateLimited, {
    200: {
      description: "The suggestions, best first",
      body: Type.Object({ tags: Type.Array(Type.Object({ tag: Type.String(), score: Type.Number() })) }),
    },
    400: { description: "`validation_failed`, a detail per field; `invalid_json` when the body is not a JSON object" },
    503: { description: "The search index is unavailable (being rebuilt)" },
  }),
});
