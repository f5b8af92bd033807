export { Fts5Engine, IndexUnavailableError } from "./engine/fts5/engine.js";
export type { EngineStats, PlanKind, SearchDocument, SearchEngine, SearchHit } from "./engine/types.js";
export { SearchErrors } from "./errors.js";
export type { SearchIndexedEvent } from "./events.js";
export type { SearchOptions } from "./options.js";
export { search } from "./plugin.js";
export {
  type ReindexOptions,
  type ReindexProgress,
  type ReindexStatus,
  type ReindexSummary,
  reindex,
} from "./reindex.js";
export type { SearchResponseBody } from "./routes/search.js";
export type { SearchService } from "./service.js";
