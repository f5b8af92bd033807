import type { KernelTables, Kysely } from "@vellum/core";

/** `articles_items`: one row per article; `tags` is the JSON array the API returns. */
export interface ArticleItemsTable {
  id: string;
  slug: string;
  title: string;
  tags: string;
  created_at: string;
  updated_at: string;
  content: string;
}

/** The plugin's tables (migrations 0001 and 0002), for `definePlugin<ArticlesOptions, ArticlesTables>`. */
export interface ArticlesTables {
  articles_items: ArticleItemsTable;
  /** One row per (tag, article), kept by triggers. */
  articles_tags: { tag: string; article_id: string };
  /** Each article's list summary as the API's JSON text, kept by triggers. */
  articles_feed: { id: string; doc: string };
  /** A queued create's claim on its slug. */
  articles_pending: { id: string; slug: string };
}

/** The schema the plugin's `ctx.db` sees: its tables and the kernel's. */
export type ArticlesDb = ArticlesTables & KernelTables;
/** The plugin's database handle or a transaction on it (a Kysely `Transaction` is a `Kysely`). */
export type Db = Kysely<ArticlesDb>;
