import type { KernelTables, Kysely, MigrationSet } from "@vellum/core";

/**
 * `webhook_events`: each event's body, stored once however many receivers it goes to; the
 * deliveries (jobs of the `deliveries` queue, one per receiver) name it by id.
 */
export interface WebhookEventsTable {
  id: string;
  type: string;
  /** The JSON body exactly as every attempt sends and signs it. */
  body: string;
  created_at: string;
}

export interface WebhooksTables {
  webhook_events: WebhookEventsTable;
}

export type WebhooksDb = Kysely<WebhooksTables & KernelTables>;

/** The plugin's migrations, in order. Never edit one that has shipped: add the next. */
export const webhooksMigrations: MigrationSet = {
  "0001_webhook_events": {
    async up(db) {
      await db.schema
        .createTable("webhook_events")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("type", "text", (c) => c.notNull())
        .addColumn("body", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();
      await db.schema.createIndex("webhook_events_created_at").on("webhook_events").column("created_at").execute();
    },
    async down(db) {
      await db.schema.dropTable("webhook_events").execute();
    },
  },
};
