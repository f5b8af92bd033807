import { ApiError, definePlugin, pathParam } from "@vellum/core";

interface ReadingTimeOptions {
  wordsPerMinute: number;
}

export const readingTime = definePlugin<ReadingTimeOptions>({
  name: "reading_time",
  defaults: { wordsPerMinute: 230 },
  setup(ctx) {
    const { wordsPerMinute } = ctx.options;

    ctx.migrations({
      "0001_init": {
        up: (db) =>
          db.schema
            .createTable("reading_time_minutes")
            .addColumn("article_id", "text", (c) => c.primaryKey())
            .addColumn("slug", "text", (c) => c.notNull().unique())
            .addColumn("minutes", "integer", (c) => c.notNull())
            .execute(),
      },
    });

    const computed = ctx.metrics.counter({
      name: "service_reading_time_computed_total",
      help: "Reading-time estimates written",
    });

    // Runs inside the article's transaction: commits or rolls back with it.
    ctx.hooks.hook("article:commit", async ({ op, article, trx }) => {
      if (op === "delete") {
        await trx.deleteFrom("reading_time_minutes").where("article_id", "=", article.id).execute();
        return;
      }
      const words = article.content
        .replace(/<[^>]*>/g, " ")
        .split(/\s+/)
        .filter(Boolean).length;
      const minutes = Math.max(1, Math.round(words / wordsPerMinute));
      await trx
        .insertInto("reading_time_minutes")
        .values({ article_id: article.id, slug: article.slug, minutes })
        .onConflict((oc) => oc.column("article_id").doUpdateSet({ slug: article.slug, minutes }))
        .execute();
      computed.inc();
    });

    ctx.router.get("/api/v1/reading-time/:slug", async (event) => {
      const row = await ctx.db
        .selectFrom("reading_time_minutes")
        .select(["slug", "minutes"])
        .where("slug", "=", pathParam(event, "slug"))
        .executeTakeFirst();
      if (!row) throw new ApiError("not_found", "No such article.");
      return row;
    });

    ctx.hooks.hook("health:check", async ({ checks }) => {
      const started = performance.now();
      await ctx.db.selectFrom("reading_time_minutes").select("slug").limit(1).execute();
      checks.push({ name: "reading_time", ok: true, detail: { latency_ms: performance.now() - started } });
    });
  },
});
