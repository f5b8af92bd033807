import type { H3Event } from "h3";
import type { AnyTransaction } from "../db/types.js";
import type { Reply } from "../http/json.js";

/** One object per operation, shared by every hook of that operation (Payload's `req.context`). */
export interface OperationContext {
  /** Set by a plugin that writes so it can ignore its own echoes. */
  origin?: string;
  [key: string]: unknown;
}

/** The article as every plugin sees it (owned by core so plugins share one type). */
export interface ArticleRecord {
  id: string;
  title: string;
  slug: string;
  content: string;
  tags: string[];
  created_at: string;
  updated_at: string;
}

/** Bytes a plugin added to (positive) or removed from (negative) the data dir. */
export interface StorageChange {
  bytes: number;
  /** Where the change happened (a plugin's folder or storage namespace), for logs only. */
  mount?: string;
}

export interface VellumErrorEvent {
  error: unknown;
  plugin?: string;
  hook?: string;
  tags?: Record<string, string>;
}

/**
 * The typed hook vocabulary: the kernel's own hooks and the shared content events other plugins
 * subscribe to (`article:*`), typed here because a subscriber must not import the emitter. A
 * plugin's own events are typed by augmentation in its package and declared with their kind in
 * its definition (`hooks`):
 * `declare module "@vellum/core" { interface VellumHooks { "myplugin:done": (p: {...}) => void } }`.
 */
export interface VellumHooks {
  "vellum:ready": (payload: Record<string, never>) => void | Promise<void>;
  "vellum:close": (payload: Record<string, never>) => void | Promise<void>;
  "vellum:error": (payload: VellumErrorEvent) => void | Promise<void>;
  "http:error": (payload: { event: H3Event; error: unknown }) => void | Promise<void>;
  /**
   * After routing, auth and rate limits, before the handler. Setting `response` answers the
   * request without running the handler (how a response cache serves hits). Serial.
   */
  "http:request": (payload: { event: H3Event; response?: Response }) => void | Promise<void>;
  /**
   * After a handler succeeded with a `Reply` or a plain JSON value (as a JSON `Reply`), before the
   * kernel makes it the response; a subscriber may replace `reply` (add an ETag, answer 304). The
   * cheap way to rewrite a body the kernel already holds as text. Not called for a handler's own
   * `Response`, nor for errors. Serial.
   */
  "http:reply": (payload: { event: H3Event; reply: Reply }) => void | Promise<void>;
  /**
   * After a handler succeeded (and `http:reply`), with its response; a subscriber may replace
   * `response` (compress it, log it). Not called for errors. Serial.
   */
  "http:response": (payload: { event: H3Event; response: Response }) => void | Promise<void>;

  "article:commit": (payload: {
    op: "create" | "update" | "delete";
    article: ArticleRecord;
    previous?: ArticleRecord;
    /** The cache tags (route meta `cacheTags`) of every response this change alters, before and after it. */
    cacheTags: string[];
    trx: AnyTransaction;
    context: OperationContext;
  }) => void | Promise<void>;
  "article:afterCreate": (payload: {
    article: ArticleRecord;
    cacheTags: string[];
    context: OperationContext;
  }) => void | Promise<void>;
  "article:afterUpdate": (payload: {
    article: ArticleRecord;
    previous: ArticleRecord;
    cacheTags: string[];
    context: OperationContext;
  }) => void | Promise<void>;
  "article:afterDelete": (payload: {
    article: ArticleRecord;
    cacheTags: string[];
    context: OperationContext;
  }) => void | Promise<void>;

  /**
   * Announced after a plugin writes or removes files under the data dir (uploads), so quota
   * accounting stays current between full rescans.
   */
  "storage:changed": (payload: StorageChange) => void | Promise<void>;
  /**
   * A plugin that keeps its own accounting of a data-dir folder (its database rows) reports the
   * folder's total, after reconciling it with the files at start: storage accounting then counts
   * that figure, moved by the plugin's `storage:changed` with `mount` set to the folder, instead of
   * walking the folder.
   */
  "storage:accounted": (payload: { folder: string; bytes: number }) => void | Promise<void>;
}

export type HookName = keyof VellumHooks & string;
export type HookPayload<N extends HookName> = Parameters<VellumHooks[N]>[0];
