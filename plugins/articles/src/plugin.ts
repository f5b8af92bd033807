import { definePlugin } from "@vellum/core";
import { ArticleApplier } from "./apply.js";
import { type CursorCodec, createCursorCodec, loadCursorSecret } from "./cursor.js";
import { articlesMigrations } from "./migrations/index.js";
import { ARTICLES_DEFAULTS, type ArticlesOptions, backoff, checkOptions } from "./options.js";
import { registerJobRoutes } from "./routes/jobs.js";
import { registerReadRoutes } from "./routes/read.js";
import { registerWriteRoutes } from "./routes/write.js";
import { createSanitizer } from "./sanitize.js";
import { createArticlesService } from "./service.js";
import { ArticleStore } from "./store.js";
import { CreateWriter } from "./writer.js";

/**
 * Articles (contract §5): routes, the queued create path with group commit, the tables, the
 * `article:*` hooks and the read-only `articles` service.
 */
export const articles = definePlugin<ArticlesOptions>({
  name: "articles",
  defaults: ARTICLES_DEFAULTS,
  setup(ctx) {
    const options = ctx.options;
    checkOptions(options);
    ctx.migrations(articlesMigrations);

    const db = ctx.db;
    const store = new ArticleStore(db);
    const deps = { db, store, queue: ctx.queue };
    const lag = ctx.metrics.histogram({
      name: "service_articles_apply_lag_seconds",
      help: "Seconds from accepting a create (its 202) to applying it",
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    });
    const applier = new ArticleApplier({ ...deps, hooks: ctx.hooks, onApplied: (seconds) => lag.observe(seconds) });
    const writer = new CreateWriter({ ...deps, queueName: options.queue });
    ctx.queue.process(options.queue, (job, trx) => applier.applyQueued(job, trx), {
      mode: "transactional",
      batchSize: options.batchSize,
      maxAttempts: options.maxAttempts,
      backoffMs: backoff(options.retryBaseMs),
    });

    let codec: CursorCodec | undefined;
    ctx.onStart(async () => {
      codec = createCursorCodec(await loadCursorSecret(ctx.storage, options.cursorSecret));
    });
    const cursor = () => {
      if (!codec) throw new Error("articles: list cursors are available once the instance has started");
      return codec;
    };

    const sanitize = createSanitizer({ mediaPrefix: options.mediaPrefix });
    registerReadRoutes(ctx.router, { prefix: options.prefix, db, store, applier, cursor });
    registerWriteRoutes(ctx.router, { prefix: options.prefix, applier, writer, sanitize });
    registerJobRoutes(ctx.router, { ...deps, prefix: options.jobsPrefix, queueName: options.queue });
    ctx.provide("articles", createArticlesService(db, store));
  },
});
