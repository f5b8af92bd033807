import type { ConsolaInstance } from "consola";
import type { H3Event } from "h3";
import type { Kysely, Transaction } from "kysely";
import type { Storage } from "unstorage";
import type { VellumConfig } from "../config.js";
import type { MigrationSet, MigrationStatus } from "../db/migrations.js";
import type { DatabaseOps, KernelTables } from "../db/types.js";
import type { Write } from "../db/write.js";
import type { HealthComponent, RegisteredComponent } from "../health/components.js";
import type { VellumHookApi } from "../hooks/hooks.js";
import type { KeyCheck, LifecycleState } from "../http/pipeline.js";
import type { PluginRouter, RouteRecord } from "../http/routes.js";
import type { TrustProxyDescription } from "../security/trust-proxy.js";
import type { VellumMetrics } from "../metrics/metrics.js";
import type { PluginQueue } from "../queue/plugin-queue.js";
import type { QueueStats } from "../queue/types.js";
import type { ScheduleOptions } from "../scheduler.js";
import type { LockoutOptions } from "../security/lockout.js";
import type { RateLimitStoreStatus } from "../security/rate-limit.js";
import type { VellumServices } from "../services.js";
import type { CommandHandler } from "./commands.js";

export type LifecycleCallback = () => void | Promise<void>;

/** What the kernel tells plugins about itself (health, metrics and admin plugins read this). */
export interface KernelInfo {
  state(): LifecycleState;
  startedAt: Date;
  version: string;
  migrationStatus(): Promise<MigrationStatus>;
  routes(): readonly RouteRecord[];
  /** The health components plugins registered (`ctx.healthComponent`). */
  components(): readonly RegisteredComponent[];
  /**
   * Every queue of every plugin: jobs waiting and dead, the queues that have a worker, and whether
   * this process works a queue now (with several processes on one database, one of them does).
   */
  jobs: { stats(): Promise<QueueStats[]>; queues(): string[]; workedHere(queue: string): boolean };
  security: {
    apiKeyConfigured: boolean;
    apiKeyStrong: boolean;
    csrfEnabled: boolean;
    /** `security.trustProxy` in plain form: `false`, a hop count, or the trusted names and CIDRs (`true` is `["loopback"]`). */
    trustProxy: TrustProxyDescription;
    lockout: LockoutOptions;
    activeLockouts(): Promise<number>;
    /** Where rate-limit and lockout counters live (`security.rateLimitStore`) and how that store is doing. */
    counterStore(): RateLimitStoreStatus;
    /**
     * Checks the key (Bearer or `X-API-Key`) for routes that authenticate themselves, with the same
     * lockout accounting as writes: a wrong key counts as a failure, a locked-out client is refused.
     */
    checkKey(event: H3Event): Promise<KeyCheck>;
  };
  /** The client IP under the configured trust-proxy rule. */
  clientIp(event: H3Event): string;
  /** Requests being answered right now. */
  inFlight(): number;
}

/** `ctx.db` of a plugin with tables `T`: its own tables and the kernel's. */
export type PluginDb<T extends object> = Kysely<T & KernelTables>;

export interface VellumPluginContext<O extends object = Record<string, unknown>, T extends object = object> {
  readonly name: string;
  /** The plugin's options: inline options, then `config.pluginOptions[configKey]`, then defaults; frozen. */
  readonly options: Readonly<O>;
  readonly config: Readonly<VellumConfig>;
  /** The data directory (read-only use: sizes, paths); ask for a folder of your own with `dataFolder`. */
  readonly dataDir: string;
  readonly logger: ConsolaInstance;
  readonly hooks: VellumHookApi;
  /** The database, typed with the plugin's tables (`definePlugin<Options, Tables>`) and the kernel's. */
  readonly db: PluginDb<T>;
  /** This plugin's typed view of a transaction it was handed (a commit hook's `trx`). */
  transaction<DB>(trx: Transaction<DB>): Transaction<T & KernelTables>;
  /**
   * One transactional write: `work` runs in a transaction, `w.commit(hook, payload)` runs a commit
   * hook's subscribers in it (`HookKind`), what they collected is flushed once before the commit,
   * and `w.after(...)` hooks run after it.
   */
  write<R>(work: (w: Write<T & KernelTables>) => Promise<R>): Promise<R>;
  readonly database: DatabaseOps;
  /** The plugin's own storage namespace (unstorage), durable under the data dir by default. */
  readonly storage: Storage;
  /** `<dataDir>/<name>`, created (mode 0700) on the first call; its absolute path. */
  dataFolder(name: string): Promise<string>;
  /** A secret of this plugin: loaded, or generated once and kept in the data dir with mode 0600. */
  secret(name: string): Promise<string>;
  readonly metrics: VellumMetrics;
  /** The plugin's durable job queue (`queue()`), or another of its queues by name (`queue("mail")`). */
  queue(name?: string): PluginQueue<T & KernelTables>;
  readonly router: PluginRouter;
  readonly features: ReadonlySet<string>;
  readonly kernel: KernelInfo;
  /** Registers a health component (`/health/<name>`, `/health`, `/health/dependencies`, `/health/ethics`). */
  healthComponent(component: HealthComponent): void;
  /** Registers this plugin's migrations (`NNNN_description` → `{ up, down? }`). */
  migrations(set: MigrationSet): void;
  /** A job that runs between start and close, never overlapping itself. */
  schedule(name: string, options: ScheduleOptions, fn: () => void | Promise<void>): void;
  provide<K extends keyof VellumServices & string>(key: K, impl: VellumServices[K]): void;
  inject<K extends keyof VellumServices & string>(key: K): VellumServices[K];
  /** A service from an `optionalDependsOn` provider, or undefined when it is not installed. */
  tryInject<K extends keyof VellumServices & string>(key: K): VellumServices[K] | undefined;
  onStart(fn: LifecycleCallback): void;
  onReady(fn: LifecycleCallback): void;
  onPreClose(fn: LifecycleCallback): void;
  onClose(fn: LifecycleCallback): void;
  /**
   * Binds the handler of a CLI command declared in the definition's `commands`. The command runs
   * in its own process after init and migrations, without queue workers or the scheduler.
   */
  command(name: string, handler: CommandHandler): void;
  /** Reports a background error: logged and emitted on `vellum:error`. */
  captureError(error: unknown, tags?: Record<string, string>): void;
}
