import {
  ApiError,
  checkSlug,
  intQuery,
  pathParam,
  type RouteHandler,
  readJsonBody,
  validationFailed,
} from "@vellum/core";
import { IndexUnavailableError } from "../engine/fts5/engine.js";
import type { SearchEngine } from "../engine/types.js";
import { MAX_SUGGESTIONS, type SuggestTagsInput } from "../schemas.js";
import { htmlToText } from "../text/html-to-text.js";

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

/**
 * The suggest-tags body, which the kernel has checked against `suggestTagsSchema` (types, lengths,
 * `limit`), with its defaults. What a schema cannot say is checked here: some text to work on.
 */
function readSuggestInput(body: SuggestTagsInput): Required<SuggestTagsInput> {
  const { title = "", content = "", tags = [], limit = 5 } = body;
  if (title.trim() === "" && content.trim() === "") {
    throw validationFailed([{ field: "content", message: "title or content is required" }]);
  }
  return { title, content, tags, limit };
}

/**
 * `POST /api/v1/ai/suggest-tags` with `{title?, content?, tags?, limit?}`: tags already used on
 * this site that fit the text, best first. Computed from the index; nothing leaves the process.
 */
export function suggestTagsHandler(engine: SearchEngine): RouteHandler {
  return async (event) => {
    const input = readSuggestInput((await readJsonBody(event)) as SuggestTagsInput);
    const text = { title: input.title, body: htmlToText(input.content) };
    const tags = await orUnavailable(engine.suggestTags(text, input.limit, input.tags));
    return { tags };
  };
}
