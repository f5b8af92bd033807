import {
  ApiError,
  type ArticleRecord,
  definePlugin,
  type MigrationSet,
  type OperationContext,
  pathParam,
  readJsonBody,
  setting,
  validationFailed,
} from "@vellum/core";
import type { ReadingTimeChanged } from "./events.js";

export interface ReadingTimeOptions {
  /** Reading speed the estimates assume, in words per minute. */
  wordsPerMinute: number;
}

/** The plugin's tables: `definePlugin<Options, Tables>` types `ctx.db` and `ctx.transaction(trx)` with them. */
export interface ReadingTimeTables {
  reading_time_minutes: {
    article_id: string;
    slug: string;
    minutes: number;
    source: ReadingTimeChanged["source"];
  };
}

/** Never edit a migration that has shipped: add the next one. */
const migrations: MigrationSet = {
  "0001_init": {
    async up(db) {
      await db.schema
        .createTable("reading_time_minutes")
        .addColumn("article_id", "text", (c) => c.primaryKey())
        .addColumn("slug", "text", (c) => c.notNull().unique())
        .addColumn("minutes", "integer", (c) => c.notNull())
        .addColumn("source", "text", (c) => c.notNull())
        .execute();
    },
  },
};

/** Minutes to read `html` at `wordsPerMinute` (at least 1). */
export function estimateMinutes(html: string, wordsPerMinute: number): number {
  const words = html
    .replace(/<[^>]*>/g, " ")
    .split(/\s+/)
    .filter(Boolean).length;
  return Math.max(1, Math.ceil(words / wordsPerMinute));
}

/** Where the `article:commit` subscriber leaves the estimate for the after-commit announcement. */
const CONTEXT_KEY = "readingTimeMinutes";

/**
 * Reading time of every article: estimated inside the article's own transaction, overridable by
 * hand through the API, announced on `reading_time:changed` and reported as a health component.
 */
export const readingTime = definePlugin<ReadingTimeOptions, ReadingTimeTables>({
  name: "reading_time",
  // Estimates come from article writes: without the articles plugin the start fails, naming it.
  dependsOn: ["articles"],
  // Declared once: the CLI reads READING_TIME_WPM, checks it (exit 2 with one line naming the
  // variable), lists it in `vellum config`; the kernel checks the value again, whatever its source.
  settings: {
    wordsPerMinute: setting.integer({
      env: "READING_TIME_WPM",
      description: "reading speed, in words per minute, that reading-time estimates assume",
      default: 230,
      min: 50,
      max: 2000,
    }),
  },
  // The hooks this plugin emits, with their kind (`isolated`: a failing subscriber is reported and
  // never fails the write that announced the change). Its payload type is in `events.ts`.
  hooks: { "reading_time:changed": "isolated" },
  setup(ctx) {
    const { wordsPerMinute } = ctx.options;
    ctx.migrations(migrations);

    // A commit hook of the articles plugin: it runs inside the article's transaction, in a
    // savepoint. If it throws, only this step is rolled back: the article still commits and the
    // failure is reported (logged, counted, `vellum:error`).
    ctx.hooks.hook("article:commit", async ({ op, article, trx, context }) => {
      const db = ctx.transaction(trx); // the same transaction, typed with this plugin's tables
      if (op === "delete") {
        await db.deleteFrom("reading_time_minutes").where("article_id", "=", article.id).execute();
        return;
      }
      const row: ReadingTimeChanged = {
        slug: article.slug,
        minutes: estimateMinutes(article.content, wordsPerMinute),
        source: "estimate",
      };
      await db
        .insertInto("reading_time_minutes")
        .values({ article_id: article.id, ...row })
        .onConflict((oc) => oc.column("article_id").doUpdateSet(row))
        .execute();
      // A subscriber has no `w.after`: it leaves the result on the operation's context, shared by
      // every hook of this write, and announces it once the article has committed (below).
      context[CONTEXT_KEY] = row.minutes;
    });

    // `article:after*` run after the commit, and only if it happened.
    const announce = async ({ article, context }: { article: ArticleRecord; context: OperationContext }) => {
      const minutes = context[CONTEXT_KEY];
      if (typeof minutes !== "number") return; // the estimate step failed and was rolled back
      await ctx.hooks.callHook("reading_time:changed", { slug: article.slug, minutes, source: "estimate" });
    };
    ctx.hooks.hook("article:afterCreate", announce);
    ctx.hooks.hook("article:afterUpdate", announce);

    const path = "/api/v1/reading-time/:slug";

    ctx.router.get(path, async (event) => {
      const row = await ctx.db
        .selectFrom("reading_time_minutes")
        .select(["slug", "minutes", "source"])
        .where("slug", "=", pathParam(event, "slug"))
        .executeTakeFirst();
      if (!row) throw new ApiError("not_found", "No reading time for this article.");
      return row;
    });

    // A write route: the kernel has already checked the API key and the CSRF token. The next edit
    // of the article estimates again.
    ctx.router.put(path, async (event) => {
      const slug = pathParam(event, "slug");
      const { minutes } = await readJsonBody(event);
      if (typeof minutes !== "number" || !Number.isInteger(minutes) || minutes < 1 || minutes > 1000) {
        throw validationFailed([{ field: "minutes", message: "must be a whole number from 1 to 1000" }]);
      }
      // One transactional write: `w.trx` is typed with this plugin's tables, and the hook given to
      // `w.after` runs once the transaction has committed (never if it rolls back).
      return ctx.write(async (w) => {
        const row = await w.trx
          .updateTable("reading_time_minutes")
          .set({ minutes, source: "override" })
          .where("slug", "=", slug)
          .returning(["slug", "minutes", "source"])
          .executeTakeFirst();
        if (!row) throw new ApiError("not_found", "No reading time for this article.");
        w.after("reading_time:changed", row);
        return row;
      });
    });

    // Served by the health plugin at `/health/reading_time`, in `/health` and `/health/dependencies`.
    ctx.healthComponent({
      name: "reading_time",
      async check() {
        const { estimates } = await ctx.db
          .selectFrom("reading_time_minutes")
          .select((eb) => eb.fn.countAll<number>().as("estimates"))
          .executeTakeFirstOrThrow();
        return { state: "ok", detail: { estimates } };
      },
    });
  },
});
