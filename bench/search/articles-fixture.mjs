import { definePlugin } from "@vellum/core";
import { sql } from "kysely";

/**
 * The bench's stand-in for the articles plugin (search never imports it): articles in their own
 * table, the real `ArticlesService`, writes through the kernel's write primitive (`article:commit`
 * inside each write's transaction, `article:after*` after it). `load`
 * inserts without hooks (to fill the database before timing the index build); `create` is the
 * normal write path (the index is updated inside the transaction).
 */
export function fixtureArticles() {
  /** @type {import("@vellum/core").VellumPluginContext | undefined} */
  let ctx;
  const toRecord = (row) => ({ ...row, tags: JSON.parse(row.tags) });
  const insert = (db, a) =>
    sql`INSERT INTO bench_articles VALUES (${a.id}, ${a.title}, ${a.slug}, ${a.content}, ${JSON.stringify(a.tags)},
      ${a.created_at}, ${a.updated_at})`.execute(db);
  const plugin = definePlugin({
    name: "articles",
    hooks: {
      "article:commit": "commit",
      "article:afterCreate": "isolated",
      "article:afterUpdate": "isolated",
      "article:afterDelete": "isolated",
    },
    setup(c) {
      ctx = c;
      c.migrations({
        "0001_init": {
          async up(db) {
            await sql`CREATE TABLE bench_articles (id TEXT PRIMARY KEY, title TEXT NOT NULL, slug TEXT NOT NULL UNIQUE,
              content TEXT NOT NULL, tags TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL)`.execute(
              db,
            );
          },
        },
      });
      const one = async (column, value) => {
        const rows = await sql`SELECT * FROM bench_articles WHERE ${sql.ref(column)} = ${value}`.execute(c.db);
        return rows.rows[0] ? toRecord(rows.rows[0]) : undefined;
      };
      c.provide("articles", {
        getById: (id) => one("id", id),
        getBySlug: (slug) => one("slug", slug),
        async *iterate(options = {}) {
          let after = options.afterId ?? "";
          for (;;) {
            const rows =
              await sql`SELECT * FROM bench_articles WHERE id > ${after} ORDER BY id LIMIT ${options.batchSize ?? 500}`.execute(
                c.db,
              );
            if (rows.rows.length === 0) return;
            yield rows.rows.map(toRecord);
            after = rows.rows.at(-1).id;
          }
        },
        async count() {
          return (await sql`SELECT count(*) AS n FROM bench_articles`.execute(c.db)).rows[0].n;
        },
        async latestChange() {
          return (await sql`SELECT max(updated_at) AS latest FROM bench_articles`.execute(c.db)).rows[0].latest ?? null;
        },
      });
    },
  });
  return {
    plugin: plugin(),
    /** @param {Array<Record<string, unknown>>} articles */
    async load(articles) {
      await ctx.db.transaction().execute(async (trx) => {
        for (const a of articles) await insert(trx, a);
      });
    },
    /** @param {Record<string, unknown>} article */
    async create(article) {
      const context = {};
      await ctx.write(async (w) => {
        await insert(w.trx, article);
        await w.commit("article:commit", { op: "create", article, context });
        w.after("article:afterCreate", { article, context });
      });
    },
    /** @param {Record<string, unknown>} article */
    async remove(article) {
      const context = {};
      await ctx.write(async (w) => {
        await sql`DELETE FROM bench_articles WHERE id = ${article.id}`.execute(w.trx);
        await w.commit("article:commit", { op: "delete", article, context });
        w.after("article:afterDelete", { article, context });
      });
    },
  };
}
