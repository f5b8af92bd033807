export type { SearchDocument, SearchEngine, SearchHit, EngineStats, PlanKind } from "./engine/types.js";
export { Fts5Engine, IndexUnavailableError } from "./engine/fts5/engine.js";
export { SearchErrors } from "./errors.js";
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
export type { SearchIndexedEvent, SearchService } from "./service.js";
