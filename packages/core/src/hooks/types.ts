import type { H3Event } from "h3";
import type { Transaction } from "kysely";

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

export interface HealthCheckResult {
  /** Component name as it appears in `/health` `components` (e.g. `db`, `search`). */
  name: string;
  ok: boolean;
  /** `ok`, `degraded` or `unavailable`; defaults from `ok`. */
  state?: "ok" | "degraded" | "unavailable";
  detail?: Record<string, unknown>;
}

/** Bytes a plugin added to (positive) or removed from (negative) the data dir. */
export interface StorageChange {
  bytes: number;
  /** Storage mount the change happened in (e.g. `media`), for logs only. */
  mount?: string;
}

/** Announced by the search plugin after an index change committed. */
export interface SearchIndexedEvent {
  kind: "article";
  id: string;
  durationMs: number;
}

export interface VellumErrorEvent {
  error: unknown;
  plugin?: string;
  hook?: string;
  tags?: Record<string, string>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the transaction is typed by the plugin that uses it
type AnyTransaction = Transaction<any>;

/**
 * The typed hook vocabulary. Third-party plugins add their own by declaration merging:
 * `declare module "@vellum/core" { interface VellumHooks { "myplugin:done": (p: {...}) => void } }`.
 *
 * Kinds: hooks whose event part starts with `after`, and the announcements listed in
 * `ISOLATED_HOOKS`, are *isolated* (each subscriber in its own try/catch, errors reported and
 * never propagated). Every other hook is *serial*: a throw aborts the operation.
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
   * After a handler succeeded, with its response; a subscriber may replace `response` (add an
   * ETag, answer 304, store it in a cache). Not called for errors. Serial.
   */
  "http:response": (payload: { event: H3Event; response: Response }) => void | Promise<void>;

  "article:commit": (payload: {
    op: "create" | "update" | "delete";
    article: ArticleRecord;
    previous?: ArticleRecord;
    trx: AnyTransaction;
    context: OperationContext;
  }) => void | Promise<void>;
  "article:afterCreate": (payload: { article: ArticleRecord; context: OperationContext }) => void | Promise<void>;
  "article:afterUpdate": (payload: {
    article: ArticleRecord;
    previous: ArticleRecord;
    context: OperationContext;
  }) => void | Promise<void>;
  "article:afterDelete": (payload: { article: ArticleRecord; context: OperationContext }) => void | Promise<void>;

  "health:check": (payload: { checks: HealthCheckResult[] }) => void | Promise<void>;
  /**
   * Announced after a plugin writes or removes files under the data dir (media uploads), so quota
   * accounting stays current between full rescans.
   */
  "storage:changed": (payload: StorageChange) => void | Promise<void>;
  /** An article's index entry was written (after commit). */
  "search:indexed": (payload: SearchIndexedEvent) => void | Promise<void>;
  /** An article's index entry was removed (after commit). */
  "search:removed": (payload: SearchIndexedEvent) => void | Promise<void>;
}

export type HookName = keyof VellumHooks & string;
export type HookPayload<N extends HookName> = Parameters<VellumHooks[N]>[0];

/** Announcements that are isolated although their name does not start with `after`. */
export const ISOLATED_HOOKS: ReadonlySet<string> = new Set([
  "vellum:error",
  "http:error",
  "health:check",
  "storage:changed",
  "search:indexed",
  "search:removed",
  "cache:invalidated",
  "webhook:delivered",
  "webhook:failed",
  "backup:started",
  "backup:completed",
  "backup:failed",
]);

export function isIsolatedHook(name: string): boolean {
  if (ISOLATED_HOOKS.has(name)) return true;
  const event = name.slice(name.indexOf(":") + 1);
  return /^after[A-Z]/.test(event);
}
