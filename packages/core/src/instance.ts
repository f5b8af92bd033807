import type { Storage } from "unstorage";
import type { VellumConfig } from "./config.js";
import type { MigrateOutcome, MigrationStatus } from "./db/migrations.js";
import type { AnyDb, DatabaseOps } from "./db/types.js";
import type { VellumHookApi } from "./hooks/hooks.js";
import type { LifecycleState } from "./http/pipeline.js";
import type { VellumMetrics } from "./metrics/metrics.js";
import type { NodeListener } from "./node/handler.js";
import type { ListenOptions, VellumServer } from "./node/listen.js";
import type { CommandIO } from "./plugin/commands.js";
import type { JobQueue } from "./queue/job-queue.js";
import type { VellumServices } from "./services.js";

export type { MigrateOutcome } from "./db/migrations.js";

/** What a host that hands `fetch` a request knows about it and Vellum cannot see. */
export interface FetchOptions {
  /** The client's address, when the host has it (an in-process call has no socket). */
  clientAddress?: string;
  /**
   * The path prefix the host stripped before handing the request over (`/cms`): every link Vellum
   * makes in the answer carries it (see `mountPrefix`).
   */
  mountPrefix?: string;
}

export interface Vellum {
  readonly config: Readonly<VellumConfig>;
  readonly hooks: VellumHookApi;
  readonly metrics: VellumMetrics;
  readonly storage: Storage;
  /** The web-standard entry point: any host that speaks `Request`/`Response` mounts this. */
  fetch(request: Request, options?: FetchOptions): Promise<Response>;
  /** Initialises plugins (setup) once; later calls wait for the first. */
  init(): Promise<void>;
  /** init, then runs pending migrations (or refuses when `migrate: false` and some are pending). */
  migrate(): Promise<MigrateOutcome>;
  /** Applied, pending and drifted migrations of every plugin (after init). */
  migrationStatus(): Promise<MigrationStatus>;
  /** init → migrate → start → ready. Requests are answered 503 until this resolves. */
  ready(): Promise<void>;
  /** Stops taking requests, waits for in-flight ones, stops jobs, closes plugins in reverse order. */
  close(): Promise<void>;
  state(): LifecycleState;
  /** A service provided by a plugin (host apps use this, plugins use `ctx.inject`). */
  service<K extends keyof VellumServices & string>(key: K): VellumServices[K] | undefined;
  /** The database on any schema (host code narrows it). */
  db(): AnyDb;
  database(): DatabaseOps;
  queue(): JobQueue;
  plugins(): readonly string[];
  /** Runs a plugin's CLI command (after `migrate()`); resolves to its exit code. */
  runCommand(name: string, io: CommandIO): Promise<number>;
  /** True when some route has this path (Connect middleware passes other paths on). */
  handles(pathname: string): boolean;
  /** Node listener for `http.createServer`, also usable as Connect/Express middleware. */
  readonly handler: NodeListener;
  /** Standalone: ready, then listen on `node:http`. */
  listen(options?: ListenOptions): Promise<VellumServer>;
}
