import { readdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import type { ArticlesService, H3Event, StorageQuotaService, VellumPluginContext } from "@vellum/core";
import { ApiError, publicPath, ulidFactory } from "@vellum/core";
import type { DecodeResult, DecoderPool } from "./decode/index.js";
import { DecodeError } from "./decode/index.js";
import type { MediaOptions } from "./options.js";
import { type CleanupResult, findOrphans } from "./orphans.js";
import { MIME_OF, type MediaKind, sniffKind } from "./sniff.js";
import type { MediaStore } from "./store.js";
import type { MediaDb, MediaItemsTable, MediaTables } from "./tables.js";
import { receiveUpload } from "./upload.js";

/**
 * How long a stored file or a work entry must have been left untouched before a start may take it
 * for a crash's leftover: younger ones may belong to an upload another process is taking.
 */
const SETTLE_MS = 10 * 60_000;

const nextMediaId = ulidFactory();

/** A media item as the API shows it (contract §6). */
export interface MediaItem {
  id: string;
  url: string;
  width: number | null;
  height: number | null;
  /** The sniffed type of the upload. */
  mime: string;
  /** Bytes uploaded. */
  bytes: number;
  /** SHA-256 of the uploaded bytes. */
  sha256: string;
}

export interface MediaLibraryDeps {
  ctx: VellumPluginContext<MediaOptions, MediaTables>;
  store: MediaStore;
  decoders: Pick<DecoderPool, "decode">;
  /** Where uploads land and decoders write: on the same file system as the store's folder. */
  workDir: string;
  /** The data dir's quota, when a plugin keeps the storage accounting. */
  quota(): StorageQuotaService | undefined;
}

/** The public path of a stored file. */
export const mediaPath = (file: string) => `/media/${file}`;

/**
 * Uploads, deduplication and the accounting of stored files. An upload is received into the work
 * dir while hashed, sniffed, decoded and re-encoded by a decoder process, published into the
 * store atomically, then recorded in `media_items`; the same bytes uploaded again (or at the same
 * moment) give the item already there.
 */
export class MediaLibrary {
  readonly #deps: MediaLibraryDeps;
  readonly #options: Readonly<MediaOptions>;
  /** Uploads of the same bytes in progress, by SHA-256: the second waits for the first's item. */
  readonly #inProgress = new Map<string, Promise<MediaItemsTable>>();

  constructor(deps: MediaLibraryDeps) {
    this.#deps = deps;
    this.#options = deps.ctx.options;
  }

  /**
   * The API's view of a row for the client of `event`: its URL under the path Vellum is mounted
   * at, absolute on the origin of the base URL when the service has one.
   */
  view(row: MediaItemsTable, event: H3Event): MediaItem {
    const origin = URL.canParse(this.#deps.ctx.config.baseUrl ?? "")
      ? new URL(this.#deps.ctx.config.baseUrl ?? "").origin
      : "";
    return {
      id: row.id,
      url: `${origin}${publicPath(event, mediaPath(row.file))}`,
      width: row.width,
      height: row.height,
      mime: row.mime,
      bytes: row.bytes,
      sha256: row.sha256,
    };
  }

  async byFile(file: string): Promise<MediaItemsTable | undefined> {
    return this.#deps.ctx.db.selectFrom("media_items").selectAll().where("file", "=", file).executeTakeFirst();
  }

  async #bySha(sha256: string): Promise<MediaItemsTable | undefined> {
    return this.#deps.ctx.db.selectFrom("media_items").selectAll().where("sha256", "=", sha256).executeTakeFirst();
  }

  /** The upload cap: `MEDIA_MAX_UPLOAD_MB`, or less when the quota leaves less. */
  #limit(): { maxBytes: number; quotaBound: boolean } {
    const quota = this.#deps.quota();
    const left = quota ? Math.max(0, quota.quotaBytes - quota.usedBytes()) : Number.POSITIVE_INFINITY;
    return left < this.#options.maxUploadBytes
      ? { maxBytes: left, quotaBound: true }
      : { maxBytes: this.#options.maxUploadBytes, quotaBound: false };
  }

  /**
   * `POST /api/v1/media`: the item, and whether it is new (201) or was there (200). The quota is
   * checked twice: before the body is received, so an upload that cannot fit is cut at once, and
   * again under the write lock of the insert, where uploads running beside it can no longer both pass.
   */
  async upload(event: H3Event): Promise<{ created: boolean; item: MediaItem }> {
    if (this.#deps.quota()) await this.account();
    const upload = await receiveUpload(event, this.#deps.workDir, this.#limit());
    try {
      if (upload.bytes === 0) throw new ApiError("unsupported_media_type", "The file is empty.");
      const existing = await this.#bySha(upload.sha256);
      if (existing) return { created: false, item: this.view(existing, event) };
      const running = this.#inProgress.get(upload.sha256);
      if (running) return { created: false, item: this.view(await running, event) };
      const store = this.#store(upload.path, upload.sha256, upload.bytes);
      this.#inProgress.set(upload.sha256, store);
      try {
        return { created: true, item: this.view(await store, event) };
      } finally {
        this.#inProgress.delete(upload.sha256);
      }
    } finally {
      await rm(upload.path, { force: true });
    }
  }

  /** Sniffs, decodes (images) and publishes the file, then records it; the row and the file go together. */
  async #store(path: string, sha256: string, bytes: number): Promise<MediaItemsTable> {
    const kind = await sniffKind(path, this.#options.allowPdf);
    if (!kind) {
      throw new ApiError(
        "unsupported_media_type",
        `The file is not an accepted type (jpeg, png, gif, webp, svg${this.#options.allowPdf ? ", pdf" : ""}).`,
      );
    }
    const id = nextMediaId();
    const file = `${id}.${kind === "pdf" ? "pdf" : "webp"}`;
    const output = join(this.#deps.workDir, `output-${file}`);
    try {
      const decoded = kind === "pdf" ? undefined : await this.#decode(kind, path, output);
      const row: MediaItemsTable = {
        id,
        sha256,
        file,
        mime: MIME_OF[kind],
        bytes,
        stored_bytes: decoded?.bytes ?? bytes,
        width: decoded?.width ?? null,
        height: decoded?.height ?? null,
        created_at: new Date().toISOString(),
      };
      await this.#deps.store.put(file, kind === "pdf" ? path : output);
      try {
        await this.#deps.ctx.write(async (w) => {
          await this.#checkRoom(w.trx, row.stored_bytes);
          await w.trx.insertInto("media_items").values(row).execute();
        });
      } catch (error) {
        await this.#deps.store.remove(file);
        // Another process stored the same bytes first: its item is the answer (over the quota or not).
        const winner = await this.#bySha(sha256);
        if (winner) return winner;
        throw error;
      }
      // The total by the rows, not this file's bytes added: the accounting may have heard a total
      // that already holds it (another upload's, read after this commit), and would count it twice.
      await this.account();
      return row;
    } finally {
      await rm(output, { force: true });
    }
  }

  /**
   * At start: the files and the rows agree again after a crash. A file without a row (published,
   * then the process died before the insert) is removed; a row without a file (lost outside
   * Vellum) is removed and reported; leftovers in the work dir go. Returns what was fixed.
   *
   * Another process may serve the data dir meanwhile, with uploads in flight: files and work
   * entries written in the last {@link SETTLE_MS} are left alone (an upload's file is published just
   * before its row commits), and the rows are read before the files, so an upload that commits
   * between the two reads is never taken for a row without a file.
   */
  async reconcile(): Promise<{ files: number; rows: number }> {
    const { ctx, store, workDir } = this.#deps;
    const settledBefore = Date.now() - SETTLE_MS;
    for (const name of await readdir(workDir)) {
      const path = join(workDir, name);
      const modified = await stat(path).then(
        (entry) => entry.mtimeMs,
        () => 0,
      );
      if (modified < settledBefore) await rm(path, { force: true, recursive: true });
    }
    const rows = await ctx.db.selectFrom("media_items").select(["id", "file"]).execute();
    const stored = await store.list();
    const files = new Set(stored.map((file) => file.name));
    const known = new Set(rows.map((row) => row.file));
    let strayFiles = 0;
    for (const { name, modifiedMs } of stored) {
      if (known.has(name) || modifiedMs >= settledBefore) continue;
      await store.remove(name);
      strayFiles++;
    }
    const missing = rows.filter((row) => !files.has(row.file)).map((row) => row.id);
    if (missing.length > 0) {
      await ctx.write(async (w) => {
        await w.trx.deleteFrom("media_items").where("id", "in", missing).execute();
      });
      ctx.captureError(
        new Error(`${missing.length} media file(s) were missing from the media folder; their items were removed`),
      );
    }
    return { files: strayFiles, rows: missing.length };
  }

  /** Removes the items no article refers to that are older than `MEDIA_ORPHAN_HOURS`: the row, then the file. */
  async cleanupOrphans(articles: ArticlesService | undefined): Promise<CleanupResult> {
    const { ctx, store } = this.#deps;
    const orphans = await findOrphans(ctx.db, articles, this.#options.orphanAgeMs);
    let bytes = 0;
    for (const orphan of orphans) {
      await ctx.write(async (w) => {
        await w.trx.deleteFrom("media_items").where("id", "=", orphan.id).execute();
      });
      await store.remove(orphan.file);
      bytes += orphan.stored_bytes;
    }
    if (bytes > 0) await this.account();
    return { removed: orphans.length, bytes_freed: bytes };
  }

  /**
   * Under the write lock of an upload's insert (`BEGIN IMMEDIATE`), where no other upload of any
   * process can commit: refuses the stored file (507) when it does not fit in what the quota
   * leaves beside everything else and the media folder's total by its rows, read here. The check
   * before the body was received saw neither the uploads that ran beside this one, here or in
   * another process, nor the stored webp, which can be larger than the upload. No hook is called
   * here: a subscriber that queried the database would wait for this transaction forever.
   */
  async #checkRoom(trx: MediaDb, bytes: number): Promise<void> {
    const quota = this.#deps.quota();
    if (!quota) return;
    const media = (await this.totals(trx)).stored_bytes;
    const left = Math.max(0, quota.quotaBytes - quota.usedBytes({ except: "media" }) - media);
    if (bytes > left) {
      throw new ApiError(
        "storage_quota_exceeded",
        `The stored file's ${bytes} bytes are over the ${left} bytes the storage quota leaves.`,
      );
    }
  }

  /**
   * Gives the storage accounting the media folder's bytes by its rows (`storage:accounted`): at
   * start, before and after each upload, after a cleanup, and whenever another process on this
   * data dir has written, so what the others stored counts here too.
   */
  async account(): Promise<void> {
    await this.#deps.ctx.hooks.callHook("storage:accounted", {
      folder: "media",
      bytes: (await this.totals()).stored_bytes,
    });
  }

  /** Items and their stored bytes (the accounting `/health/media` reports); `db` is a write's transaction when there is one. */
  async totals(db: MediaDb = this.#deps.ctx.db): Promise<{ items: number; stored_bytes: number }> {
    const row = await db
      .selectFrom("media_items")
      .select((eb) => [
        eb.fn.countAll<number>().as("items"),
        eb.fn.coalesce(eb.fn.sum<number>("stored_bytes"), eb.lit(0)).as("stored_bytes"),
      ])
      .executeTakeFirstOrThrow();
    return { items: Number(row.items), stored_bytes: Number(row.stored_bytes) };
  }

  async #decode(kind: Exclude<MediaKind, "pdf">, input: string, output: string): Promise<DecodeResult> {
    try {
      return await this.#deps.decoders.decode({ input, output, kind });
    } catch (error) {
      if (error instanceof DecodeError) {
        if (error.reason === "closed") throw new ApiError("service_unavailable", "The service is shutting down.");
        throw new ApiError("invalid_media", DECODE_MESSAGES[error.reason]);
      }
      throw error;
    }
  }
}

const DECODE_MESSAGES: Record<Exclude<DecodeError["reason"], "closed">, string> = {
  invalid: "The file could not be decoded as the image its bytes claim to be.",
  too_large: "The image is over the decoder's pixel limit.",
  timeout: "Decoding the image took longer than the decoder's time limit.",
  crashed: "The decoder failed on this image.",
  memory: "Decoding the image needed more memory than the decoder may use.",
};
