// The shapes of Vellum's answers, as the default plugins send them (docs/api.md). Timestamps are ISO 8601 UTC with
// milliseconds and `Z`; ids are ULIDs.

/** An article as a list page shows it: everything but `content`. */
export interface ArticleSummary {
  id: string;
  title: string;
  slug: string;
  tags: string[];
  created_at: string;
  updated_at: string;
}

export interface Article extends ArticleSummary {
  /** Sanitized HTML. */
  content: string;
}

/** `GET /api/v1/articles`: newest first; `next_cursor` is `null` on the last page. */
export interface ArticlePage {
  articles: ArticleSummary[];
  next_cursor: string | null;
}

/** A create's body; unknown fields are ignored by the service. */
export interface ArticleInput {
  title: string;
  slug: string;
  /** HTML, sanitized on write; at most 1 MiB. */
  content: string;
  /** At most 20, each 1–64 characters. */
  tags?: string[];
}

/** An update's body: omitted fields keep their values; a different `slug` renames. */
export type ArticlePatch = Partial<ArticleInput>;

/** The `202` of a create: the write is durable and waits for the worker. */
export interface QueuedArticle {
  /** The job id, which becomes the article's id. */
  id: string;
  status: "queued";
  /** The `Location` header as the service sent it (`/api/v1/articles/<slug>`); `null` if a proxy dropped it. */
  location: string | null;
}

export type JobStatus = "queued" | "applied" | "failed";

/** `GET /api/v1/jobs/:id`. `error` is present while a write is retried and once it failed. */
export interface Job {
  id: string;
  status: JobStatus;
  error?: { code: string; message: string };
}

/** One hit of `GET /api/v1/search`. */
export interface SearchHit {
  id: string;
  slug: string;
  title: string;
  tags: string[];
  /** Plain text, HTML-escaped, with the matches in `<mark>…</mark>`. */
  snippet: string;
  score: number;
  created_at: string;
  updated_at: string;
}

export interface SearchResults {
  results: SearchHit[];
  total: number;
  limit: number;
  offset: number;
  /** Present when the index is missing or unusable (then `results` is empty). */
  degraded?: true;
}

/** `POST /api/v1/media`: the stored item (`sha256`, `bytes` and `mime` describe the uploaded file). */
export interface MediaItem {
  id: string;
  /** `/media/<id>.webp` (or `.pdf`), absolute when the service has a `baseUrl`. */
  url: string;
  /** `null` for a pdf. */
  width: number | null;
  height: number | null;
  mime: string;
  bytes: number;
  sha256: string;
}

export interface PurgeResult {
  purged: true;
  slug: string;
}

export type ComponentState = "ok" | "degraded" | "unavailable" | "absent";

/** `GET /health`. */
export interface Health {
  status: "ok" | "degraded";
  version: string;
  uptime_seconds: number;
  /** Every component's state, present only when `status` is `degraded`. */
  components?: Record<string, ComponentState>;
}
