import { CoreErrors } from "./errors/vellum-error.js";
import type { ArticleRecord } from "./hooks/types.js";

/**
 * Read-only article queries, provided by the articles plugin as service `articles` for
 * reindexing, backup checks and orphan detection. Core owns the type so consumers never
 * import the articles plugin.
 */
export interface ArticlesService {
  getById(id: string): Promise<ArticleRecord | undefined>;
  getBySlug(slug: string): Promise<ArticleRecord | undefined>;
  /** Every article in id order, in batches (default 500), starting after `afterId`. */
  iterate(options?: { batchSize?: number; afterId?: string }): AsyncIterable<ArticleRecord[]>;
  count(): Promise<number>;
  /** Latest `updated_at` over all articles (ISO string), or null when there are none. */
  latestChange(): Promise<string | null>;
  /** The cache tags of every response that shows the article `slug` (its page, the list, its tags' pages). */
  cacheTags(slug: string): Promise<string[]>;
}

/**
 * The data dir's quota and what it holds, provided as service `storage` by the plugin that keeps
 * the storage accounting and its quota, so a plugin that stores files can bound them.
 */
export interface StorageQuotaService {
  quotaBytes: number;
  /**
   * Bytes in use now: the database and every file under the data dir. `except` leaves out a folder
   * whose plugin gives its own total (`storage:accounted`), for that plugin to add its figure of now.
   */
  usedBytes(options?: { except?: string }): number;
}

/**
 * Typed services between plugins. A plugin declares what it provides by augmentation:
 * `declare module "@vellum/core" { interface VellumServices { articles: ArticlesService } }`.
 */
export interface VellumServices {
  articles: ArticlesService;
  storage: StorageQuotaService;
}

type Key = keyof VellumServices & string;

export class ServiceRegistry {
  readonly #services = new Map<string, { provider: string; impl: unknown }>();

  provide<K extends Key>(provider: string, key: K, impl: VellumServices[K]): void {
    const existing = this.#services.get(key);
    if (existing) throw CoreErrors.serviceDuplicate([key, existing.provider, provider], { plugin: provider });
    this.#services.set(key, { provider, impl });
  }

  /** `allowed` are the plugins the consumer depends on; the provider must be one of them. */
  inject<K extends Key>(consumer: string, key: K, allowed: readonly string[]): VellumServices[K] {
    const entry = this.#services.get(key);
    if (!entry || (entry.provider !== consumer && !allowed.includes(entry.provider))) {
      throw CoreErrors.serviceUndeclared([key, consumer], { plugin: consumer });
    }
    return entry.impl as VellumServices[K];
  }

  /** Like `inject`, but undefined when no provider is installed (for `optionalDependsOn`). */
  tryInject<K extends Key>(consumer: string, key: K, allowed: readonly string[]): VellumServices[K] | undefined {
    return this.#services.has(key) ? this.inject(consumer, key, allowed) : undefined;
  }

  /** For the host app: any provided service. */
  get<K extends Key>(key: K): VellumServices[K] | undefined {
    return this.#services.get(key)?.impl as VellumServices[K] | undefined;
  }
}
