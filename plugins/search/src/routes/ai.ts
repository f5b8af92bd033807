import {
  ApiError,
  type ApiErrorDetail,
  checkSlug,
  intQuery,
  pathParam,
  type RouteHandler,
  readJsonBody,
  validationFailed,
} from "@vellum/core";
import { IndexUnavailableError } from "../engine/fts5/engine.js";
import type { SearchEngine } from "../engine/types.js";
import { htmlToText } from "../text/html-to-text.js";

const MAX_TITLE = 300;
const MAX_CONTENT = 1024 * 1024;
const MAX_TAGS = 20;
const MAX_SUGGESTIONS = 20;

async function orUnavailable<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof IndexUnavailableError) {
      throw new ApiError("service_unavailable", "The search index is unavailable; it is being rebuilt.");
    }
    throw error;
  }
}

/** `GET /api/v1/ai/related/:slug?limit=`: articles most similar to this one by the index's terms. */
export function relatedHandler(engine: SearchEngine): RouteHandler {
  return async (event) => {
    const slug = checkSlug(pathParam(event, "slug"));
    const limit = intQuery(event, "limit", { min: 1, max: MAX_SUGGESTIONS, fallback: 5 });
    const found = await orUnavailable(engine.related(slug, limit));
    if (!found) throw new ApiError("not_found", "No indexed article has this slug.");
    return { slug, terms: found.terms, results: found.hits };
  };
}

interface SuggestInput {
  title: string;
  content: string;
  tags: string[];
  limit: number;
}

function readSuggestInput(body: Record<string, unknown>): SuggestInput {
  const details: ApiErrorDetail[] = [];
  const text = (field: "title" | "content", max: number) => {
    const value = body[field];
    if (value === undefined) return "";
    if (typeof value !== "string") details.push({ field, message: "must be a string" });
    else if (value.length > max) details.push({ field, message: `must be at most ${max} characters` });
    else return value;
    return "";
  };
  const title = text("title", MAX_TITLE);
  const content = text("content", MAX_CONTENT);
  let tags: string[] = [];
  if (body.tags !== undefined) {
    if (!Array.isArray(body.tags) || body.tags.length > MAX_TAGS || !body.tags.every((t) => typeof t === "string")) {
      details.push({ field: "tags", message: `must be an array of at most ${MAX_TAGS} strings` });
    } else tags = body.tags as string[];
  }
  let limit = 5;
  if (body.limit !== undefined) {
    if (!Number.isInteger(body.limit) || (body.limit as number) < 1 || (body.limit as number) > MAX_SUGGESTIONS) {
      details.push({ field: "limit", message: `must be an integer from 1 to ${MAX_SUGGESTIONS}` });
    } else limit = body.limit as number;
  }
  if (details.length === 0 && title.trim() === "" && content.trim() === "") {
    details.push({ field: "content", message: "title or content is required" });
  }
  if (details.length > 0) throw validationFailed(details);
  return { title, content, tags, limit };
}

/**
 * `POST /api/v1/ai/suggest-tags` with `{title?, content?, tags?, limit?}`: tags already used on
 * this site that fit the text, best first. Computed from the index; nothing leaves the process.
 */
export function suggestTagsHandler(engine: SearchEngine): RouteHandler {
  return async (event) => {
    const input = readSuggestInput(await readJsonBody(event));
    const text = { title: input.title, body: htmlToText(input.content) };
    const tags = await orUnavailable(engine.suggestTags(text, input.limit, input.tags));
    return { tags };
  };
}
