import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { definePlugin } from "@vellum/core";
import { mediaComponent } from "./component.js";
import { DecoderPool } from "./decode/index.js";
import { MediaLibrary } from "./library.js";
import { checkMediaSettings, MEDIA_SETTINGS, type MediaOptions } from "./options.js";
import { registerMediaRoutes } from "./routes.js";
import { FsMediaStore } from "./store.js";
import { mediaMigrations, type MediaTables } from "./tables.js";

const DAY = 86_400_000;

/**
 * Media (contract §6): uploads streamed to disk while hashed, typed by their bytes, decoded and
 * re-encoded to webp by a pool of sandboxed decoder processes, deduplicated, published atomically
 * under `<data>/media` and served with immutable caching and ranges; orphans cleaned nightly.
 */
export const media = definePlugin<MediaOptions, MediaTables>({
  name: "media",
  settings: MEDIA_SETTINGS,
  checkSettings: (options) => checkMediaSettings(options),
  // Only for the order of setup: the quota comes from service `storage`, references from `articles`.
  optionalDependsOn: ["health", "articles"],
  async setup(ctx) {
    const options = ctx.options;
    ctx.migrations(mediaMigrations);
    const folder = await ctx.dataFolder("media");
    const workDir = join(folder, ".work");
    await mkdir(workDir, { recursive: true, mode: 0o700 });
    const store = new FsMediaStore(folder);
    const decoders = new DecoderPool({
      size: options.decoders,
      workDir,
      limits: {
        maxFramePixels: options.maxFramePixels,
        maxTotalPixels: options.maxTotalPixels,
        memoryMb: Math.floor(options.decoderMemoryBytes / (1024 * 1024)),
        timeoutMs: options.decodeTimeoutMs,
      },
      logger: ctx.logger,
    });
    const quota = () => ctx.tryInject("storage");
    const articles = () => ctx.tryInject("articles");
    const library = new MediaLibrary({ ctx, store, decoders, workDir, quota });

    ctx.onStart(async () => {
      const fixed = await library.reconcile();
      if (fixed.files > 0)
        ctx.logger.warn(`removed ${fixed.files} media file(s) that had no item (an upload cut short)`);
      // From now on the storage accounting counts the media folder by these rows, not by walking it.
      await library.account();
    });
    ctx.onClose(() => decoders.close());
    // In every process: the uploads and cleanups of the others on this data dir move the media total
    // here too, so it is taken again by the rows once another process has written (its own moves are
    // heard at once). Asking SQLite for `data_version` costs microseconds; the SUM runs only then.
    let seen: number | undefined;
    ctx.schedule("account-storage", { everyMs: 5000, everyProcess: true }, async () => {
      const version = ctx.database.dataVersion();
      if (version === seen) return;
      seen = version;
      await library.account();
    });
    // Once at start too, so an instance restarted more often than daily still cleans up.
    ctx.schedule("cleanup-orphans", { everyMs: DAY, jitterMs: 3_600_000, runImmediately: true }, async () => {
      const { removed, bytes_freed } = await library.cleanupOrphans(articles());
      if (removed > 0) ctx.logger.info(`removed ${removed} orphan media item(s), ${bytes_freed} bytes`);
    });
    registerMediaRoutes(ctx.router, { library, store, articles });
    ctx.healthComponent(mediaComponent({ library, decoders, quota }));
  },
});
