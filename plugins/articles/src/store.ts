import type { ArticleRecord, MaybePromise } from "@vellum/core";
import { PreparedColumn, PreparedQuery, sql, thenNow } from "@vellum/core";
import type { ArticleItemsTable, Db } from "./tables.js";

type ItemRow = ArticleItemsTable;

const FULL_COLUMNS = ["id", "slug", "title", "tags", "created_at", "updated_at", "content"] as const;

/** The keys of an article in the API, in the order `toRecord` (and so `JSON.stringify`) gives them. */
const DOCUMENT_KEYS = ["id", "title", "slug", "tags", "content", "created_at", "updated_at"] as const;

/**
 * The API's JSON for an article, rendered by SQLite's `json_object`. `GET` of one article answers
 * with this text as it is: no row object, no `JSON.parse` of the tags, no `JSON.stringify`. (List
 * pages read summaries already rendered: `articles_feed`, migration 0002.)
 */
const DOCUMENT_JSON = sql<string>`json_object(${sql.raw(
  DOCUMENT_KEYS.map((key) => (key === "tags" ? "'tags', json(tags)" : `'${key}', ${key}`)).join(", "),
)})`;

/** Placeholder bound at compile time; every statement is compiled once and run with real values. */
const P = "?";

function toRecord(row: ItemRow): ArticleRecord {
  return {
    id: row.id,
    title: row.title,
    slug: row.slug,
    tags: JSON.parse(row.tags) as string[],
    content: row.content,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/**
 * Every query of the plugin over `articles_items`, `articles_tags`, `articles_feed` and
 * `articles_pending`, compiled once (Kysely's compile step costs more than SQLite's lookups on hot
 * reads). Methods take the executor so the same statements run inside and outside transactions.
 * `articles_tags` and `articles_feed` are never written here: triggers on `articles_items` keep
 * them equal to each article's tags and summary.
 */
export class ArticleStore {
  readonly #bySlug: PreparedQuery<ItemRow>;
  readonly #bySlugJson: PreparedQuery<{ doc: string }>;
  readonly #byId: PreparedQuery<ItemRow>;
  readonly #page: PreparedColumn<string>;
  readonly #pageAfter: PreparedColumn<string>;
  readonly #tagPage: PreparedColumn<string>;
  readonly #tagPageAfter: PreparedColumn<string>;
  readonly #ascending: PreparedQuery<ItemRow>;
  readonly #slugHolder: PreparedQuery<{ id: string; queued: number }>;
  readonly #insertClaimed: PreparedQuery<never>;
  readonly #update: PreparedQuery<never>;
  readonly #delete: PreparedQuery<never>;
  readonly #claimBySlug: PreparedQuery<{ id: string; slug: string }>;
  readonly #insertClaim: PreparedQuery<never>;
  readonly #deleteClaim: PreparedQuery<never>;
  readonly #count: PreparedQuery<{ count: number }>;
  readonly #latest: PreparedQuery<{ latest: string | null }>;

  constructor(db: Db) {
    const items = () => db.selectFrom("articles_items");
    const feed = () => db.selectFrom("articles_feed").select("doc");
    const tagged = () =>
      db
        .selectFrom("articles_tags as t")
        .innerJoin("articles_feed as f", "f.id", "t.article_id")
        .select("f.doc")
        .where("t.tag", "=", P);
    this.#bySlug = new PreparedQuery(items().select(FULL_COLUMNS).where("slug", "=", P).compile(), 1);
    this.#bySlugJson = new PreparedQuery(items().select(DOCUMENT_JSON.as("doc")).where("slug", "=", P).compile(), 1);
    this.#byId = new PreparedQuery(items().select(FULL_COLUMNS).where("id", "=", P).compile(), 1);
    this.#page = new PreparedColumn(feed().orderBy("id", "desc").limit(1).compile(), 1);
    this.#pageAfter = new PreparedColumn(feed().where("id", "<", P).orderBy("id", "desc").limit(1).compile(), 2);
    this.#tagPage = new PreparedColumn(tagged().orderBy("t.article_id", "desc").limit(1).compile(), 2);
    this.#tagPageAfter = new PreparedColumn(
      tagged().where("t.article_id", "<", P).orderBy("t.article_id", "desc").limit(1).compile(),
      3,
    );
    this.#ascending = new PreparedQuery(
      items().select(FULL_COLUMNS).where("id", ">", P).orderBy("id", "asc").limit(1).compile(),
      2,
    );
    this.#slugHolder = new PreparedQuery(
      sql`SELECT id, 0 AS queued FROM articles_items WHERE slug = ${P}
          UNION ALL SELECT id, 1 AS queued FROM articles_pending WHERE slug = ${P}`.compile(db),
      2,
    );
    // Inserts only while the create's claim exists; the insert trigger consumes the claim and
    // writes the tag rows, so applying a create is this one statement.
    this.#insertClaimed = new PreparedQuery(
      sql`INSERT INTO articles_items (id, slug, title, tags, created_at, updated_at, content)
          SELECT ${P}, ${P}, ${P}, ${P}, ${P}, ${P}, ${P}
          WHERE EXISTS (SELECT 1 FROM articles_pending WHERE id = ${P})`.compile(db),
      8,
    );
    const changes = { slug: P, title: P, tags: P, updated_at: P, content: P };
    this.#update = new PreparedQuery(db.updateTable("articles_items").set(changes).where("id", "=", P).compile(), 6);
    this.#delete = new PreparedQuery(db.deleteFrom("articles_items").where("id", "=", P).compile(), 1);
    const claims = () => db.selectFrom("articles_pending").select(["id", "slug"]);
    this.#claimBySlug = new PreparedQuery(claims().where("slug", "=", P).compile(), 1);
    this.#insertClaim = new PreparedQuery(db.insertInto("articles_pending").values({ id: P, slug: P }).compile(), 2);
    this.#deleteClaim = new PreparedQuery(db.deleteFrom("articles_pending").where("id", "=", P).compile(), 1);
    this.#count = new PreparedQuery(
      items()
        .select((eb) => eb.fn.countAll().as("count"))
        .compile(),
      0,
    );
    this.#latest = new PreparedQuery(
      items()
        .select((eb) => eb.fn.max("updated_at").as("latest"))
        .compile(),
      0,
    );
  }

  async bySlug(db: Db, slug: string): Promise<ArticleRecord | undefined> {
    const [row] = await this.#bySlug.rows(db, [slug]);
    return row && toRecord(row);
  }

  /** The article's API JSON (see `DOCUMENT_JSON`), or undefined; at once when the connection is free. */
  bySlugJson(db: Db, slug: string): MaybePromise<string | undefined> {
    return thenNow(this.#bySlugJson.rowsNow(db, [slug]), (rows) => rows[0]?.doc);
  }

  async byId(db: Db, id: string): Promise<ArticleRecord | undefined> {
    const [row] = await this.#byId.rows(db, [id]);
    return row && toRecord(row);
  }

  /**
   * Newest first, ids below `beforeId` when given, optionally only articles with `tag`: each
   * article's summary as the API's JSON text, from `articles_feed`; at once when the connection is free.
   */
  page(db: Db, options: { limit: number; beforeId?: string; tag?: string }): MaybePromise<string[]> {
    const { limit, beforeId, tag } = options;
    if (tag === undefined) {
      return beforeId === undefined
        ? this.#page.valuesNow(db, [limit])
        : this.#pageAfter.valuesNow(db, [beforeId, limit]);
    }
    return beforeId === undefined
      ? this.#tagPage.valuesNow(db, [tag, limit])
      : this.#tagPageAfter.valuesNow(db, [tag, beforeId, limit]);
  }

  /** Oldest first, ids above `afterId` (the service's full iteration). */
  async ascending(db: Db, afterId: string, limit: number): Promise<ArticleRecord[]> {
    return (await this.#ascending.rows(db, [afterId, limit])).map(toRecord);
  }

  /** Who holds `slug`: an article, or a queued create (`queued: true`) that claimed it. */
  async slugHolder(db: Db, slug: string): Promise<{ id: string; queued: boolean } | undefined> {
    const [row] = await this.#slugHolder.rows(db, [slug, slug]);
    return row && { id: row.id, queued: row.queued === 1 };
  }

  /**
   * Inserts the article of queued create `article.id` if its claim is still there (and thereby
   * consumes it); returns false when the create was already applied.
   */
  async insertClaimed(db: Db, article: ArticleRecord): Promise<boolean> {
    const { id, slug, title, tags, created_at, updated_at, content } = article;
    const values = [id, slug, title, JSON.stringify(tags), created_at, updated_at, content, id];
    return (await this.#insertClaimed.run(db, values)) > 0;
  }

  /** Writes `next` over the article with the same id (the tag rows follow by trigger). */
  async update(db: Db, next: ArticleRecord): Promise<void> {
    const { id, slug, title, tags, updated_at, content } = next;
    await this.#update.run(db, [slug, title, JSON.stringify(tags), updated_at, content, id]);
  }

  async delete(db: Db, id: string): Promise<void> {
    await this.#delete.run(db, [id]);
  }

  /** The queued create that claims `slug`, if any. */
  async claimBySlug(db: Db, slug: string): Promise<{ id: string; slug: string } | undefined> {
    return (await this.#claimBySlug.rows(db, [slug]))[0];
  }

  async claim(db: Db, id: string, slug: string): Promise<void> {
    await this.#insertClaim.run(db, [id, slug]);
  }

  /** Drops the claim of create `id`; returns whether there was one. */
  async release(db: Db, id: string): Promise<boolean> {
    return (await this.#deleteClaim.run(db, [id])) > 0;
  }

  async count(db: Db): Promise<number> {
    return Number((await this.#count.rows(db, []))[0]?.count ?? 0);
  }

  async latestChange(db: Db): Promise<string | null> {
    return (await this.#latest.rows(db, []))[0]?.latest ?? null;
  }
}
