import type { ConsolaInstance } from "consola";
import type { H3Event } from "h3";
import type { Kysely } from "kysely";
import type { Storage } from "unstorage";
import type { VellumConfig } from "../config.js";
import type { MigrationSet, MigrationStatus } from "../db/migrations.js";
import type { DatabaseOps } from "../db/types.js";
import type { VellumHookApi } from "../hooks/hooks.js";
import type { KeyCheck, LifecycleState } from "../http/pipeline.js";
import type { PluginRouter, RouteRecord } from "../http/routes.js";
import type { VellumMetrics } from "../metrics/metrics.js";
import type { JobQueue } from "../queue/job-queue.js";
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
  security: {
    apiKeyConfigured: boolean;
    apiKeyStrong: boolean;
    csrfEnabled: boolean;
    trustProxy: boolean | number;
    lockout: { maxFailures: number; windowMs: number; durationMs: number };
    activeLockouts(): Promise<number>;
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

export interface VellumPluginContext<O extends object = Record<string, unknown>> {
  readonly name: string;
  /** defu(inline options, config.pluginOptions[configKey], defaults), frozen. */
  readonly options: Readonly<O>;
  readonly config: Readonly<VellumConfig>;
  readonly dataDir: string;
  readonly logger: ConsolaInstance;
  readonly hooks: VellumHookApi;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- plugins narrow the schema to their own tables
  readonly db: Kysely<any>;
  readonly database: DatabaseOps;
  readonly storage: Storage;
  readonly metrics: VellumMetrics;
  readonly queue: JobQueue;
  readonly router: PluginRouter;
  readonly features: ReadonlySet<string>;
  readonly kernel: KernelInfo;
  /** Registers this plugin's migrations (`NNNN_description` → `{ up, down? }`). */
  migrations(set: MigrationSet): void;
  /** A job that runs between start and close, never overlapping itself. */
  schedule(
    name: string,
    options: { everyMs: number; jitterMs?: number; runImmediately?: boolean },
    fn: () => void | Promise<void>,
  ): void;
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
  /** Reports a background error: logged, counted, and emitted on `vellum:error`. */
  captureError(error: unknown, tags?: Record<string, string>): void;
}
