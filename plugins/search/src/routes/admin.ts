import { ApiError, type RouteHandler } from "@vellum/core";
import type { SearchEngine } from "../engine/types.js";
import type { ReindexController } from "../reindex.js";

export interface AdminRouteDeps {
  engine: SearchEngine;
  controller: ReindexController;
  hasSource(): boolean;
  report(error: unknown): void;
}

/**
 * `POST /admin/reindex`: starts a rebuild in the background and answers `202` with
 * `{status: "started" | "running"}` as soon as it has its generation (or another process is found
 * building); `GET` reports progress and how the last rebuild went.
 */
export function startReindexHandler(deps: AdminRouteDeps): RouteHandler {
  return async (event) => {
    if (!deps.hasSource()) throw new ApiError("service_unavailable", "Reindexing needs the articles plugin.");
    const building = (await deps.engine.stats()).building;
    const elsewhere = !deps.controller.running && building !== null && building.alive;
    event.res.status = 202;
    if (!deps.controller.running && !elsewhere) {
      // Answered once the build has its generation, or another process turned out to have started one first.
      const other = await deps.controller.begin(deps.report);
      if (other === undefined) return { status: "started", ...deps.controller.status() };
      return { status: "running", ...deps.controller.status(), generation: other };
    }
    return { status: "running", ...deps.controller.status(), generation: building?.generation ?? null };
  };
}

export function reindexStatusHandler(deps: AdminRouteDeps): RouteHandler {
  return async () => {
    const stats = await deps.engine.stats();
    return {
      ...deps.controller.status(),
      index: {
        state: stats.state,
        generation: stats.generation,
        documents: stats.documents,
        indexed_at: stats.indexedAt,
      },
      building: stats.building,
    };
  };
}
