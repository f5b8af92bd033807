import { type ArticleRecord, ulidFactory } from "@vellum/core";

export type WebhookEventType = "article.created" | "article.updated" | "article.deleted";

const TYPES: Record<"create" | "update" | "delete", WebhookEventType> = {
  create: "article.created",
  update: "article.updated",
  delete: "article.deleted",
};

/** One event: its id (`X-Service-Delivery`, the same for every receiver and every attempt), type and body. */
export interface WebhookEvent {
  id: string;
  type: WebhookEventType;
  /** The JSON body exactly as every attempt sends and signs it. */
  body: string;
  createdAt: string;
}

const nextEventId = ulidFactory();

/**
 * The event of a committed change (contract §7): `{"id","type","created_at","data":{"article"}}`,
 * the article as the API shows it; a deletion carries only its `id` and `slug`.
 */
export function articleEvent(
  op: "create" | "update" | "delete",
  article: ArticleRecord,
  now = Date.now(),
): WebhookEvent {
  const id = nextEventId(now);
  const type = TYPES[op];
  const shown =
    op === "delete"
      ? { id: article.id, slug: article.slug }
      : {
          id: article.id,
          title: article.title,
          slug: article.slug,
          content: article.content,
          tags: article.tags,
          created_at: article.created_at,
          updated_at: article.updated_at,
        };
  const createdAt = new Date(now).toISOString();
  const body = JSON.stringify({ id, type, created_at: createdAt, data: { article: shown } });
  return { id, type, body, createdAt };
}
