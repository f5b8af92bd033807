import type { ArticlesService, PluginRouter } from "@vellum/core";
import { pathParam } from "@vellum/core";
import type { MediaLibrary } from "./library.js";
import { cleanupSchema, serveSchema, uploadSchema } from "./schemas.js";
import { serveMedia } from "./serve.js";
import type { MediaStore } from "./store.js";

export const UPLOAD_PATH = "/api/v1/media";
export const CLEANUP_PATH = "/api/v1/admin/cleanup-orphans";

export interface MediaRouteDeps {
  library: MediaLibrary;
  store: MediaStore;
  articles(): ArticlesService | undefined;
}

/**
 * `POST /api/v1/media` (key and CSRF): 201 with the new item, 200 with the existing one for the
 * same bytes. `GET|HEAD /media/<file>`: the stored file. `POST /api/v1/admin/cleanup-orphans`
 * (key and CSRF): `{removed, bytes_freed}`.
 */
export function registerMediaRoutes(router: PluginRouter, deps: MediaRouteDeps): void {
  router.post(
    UPLOAD_PATH,
    async (event) => {
      const { created, item } = await deps.library.upload(event);
      event.res.status = created ? 201 : 200;
      return item;
    },
    { schema: uploadSchema },
  );
  router.get("/media/:file", (event) => serveMedia(event, deps.store, pathParam(event, "file")), {
    schema: serveSchema,
  });
  router.post(CLEANUP_PATH, () => deps.library.cleanupOrphans(deps.articles()), {
    schema: cleanupSchema,
    action: {
      label: "Remove orphaned media",
      component: "media",
      confirm: "Remove every upload older than MEDIA_ORPHAN_HOURS that no article refers to?",
    },
  });
}
