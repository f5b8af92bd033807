import type { KernelTables, Kysely, MigrationSet } from "@vellum/core";

/** `media_items`: one row per stored file, the accounting of the media folder. */
export interface MediaItemsTable {
  /** ULID; the stored file is `<id>.<ext>`. */
  id: string;
  /** Lower-case hex SHA-256 of the uploaded bytes: the same bytes again are the same item. */
  sha256: string;
  /** The stored file's name. */
  file: string;
  /** The sniffed type of the upload. */
  mime: string;
  /** Bytes uploaded. */
  bytes: number;
  /** Bytes of the stored file (what counts against the quota). */
  stored_bytes: number;
  width: number | null;
  height: number | null;
  created_at: string;
}

export interface MediaTables {
  media_items: MediaItemsTable;
}

export type MediaDb = Kysely<MediaTables & KernelTables>;

/** The plugin's migrations, in order. Never edit one that has shipped: add the next. */
export const mediaMigrations: MigrationSet = {
  "0001_media_items": {
    async up(db) {
      await db.schema
        .createTable("media_items")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("sha256", "text", (c) => c.notNull().unique())
        .addColumn("file", "text", (c) => c.notNull().unique())
        .addColumn("mime", "text", (c) => c.notNull())
        .addColumn("bytes", "integer", (c) => c.notNull())
        .addColumn("stored_bytes", "integer", (c) => c.notNull())
        .addColumn("width", "integer")
        .addColumn("height", "integer")
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();
      await db.schema.createIndex("media_items_created_at").on("media_items").column("created_at").execute();
    },
    async down(db) {
      await db.schema.dropTable("media_items").execute();
    },
  },
};
