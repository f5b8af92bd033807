import { createRequire } from "node:module";
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { createConsola } from "consola";
import { H3, type H3Event } from "h3";
import type { VellumConfig } from "./config.js";
import { MigrationRunner } from "./db/migrations.js";
import { openSqlite } from "./db/sqlite.js";
import type { VellumDatabase } from "./db/types.js";
import { Writes } from "./db/write.js";
import { createStorageFailureLog } from "./errors/storage-failure.js";
import { CoreErrors, VellumError } from "./errors/vellum-error.js";
import { HealthRegistry } from "./health/components.js";
import { createHookApi, VellumHookBus } from "./hooks/hooks.js";
import { createCorsPolicy } from "./http/cors.js";
import { ERRORS_PAGE_SCHEMA, errorsPage } from "./http/errors-page.js";
import { assignMountPrefix, basePathOf } from "./http/mount.js";
import { createPipeline, type LifecycleState } from "./http/pipeline.js";
import { createRequestObserver } from "./http/observe.js";
import { requestId } from "./http/request-id.js";
import { RouteTable } from "./http/routes.js";
import { Shortcuts } from "./http/shortcuts.js";
import { LifecycleCallbacks, once, withTimeout } from "./internal/lifecycle.js";
import { createPluginContext, type KernelParts } from "./internal/plugin-context.js";
import { registerQueueMetrics } from "./internal/queue-metrics.js";
import { registerCoreMetrics } from "./metrics/core-metrics.js";
import { createMetrics } from "./metrics/metrics.js";
import { createNodeListener, type NodeListener } from "./node/handler.js";
import { listen } from "./node/listen.js";
import { CommandHandlers, offlineCommand } from "./plugin/commands.js";
import { offlineContext, prepareDataDir } from "./plugin/offline.js";
import type { KernelInfo } from "./plugin/context.js";
import type { AnyVellumPlugin } from "./plugin/define.js";
import { resolvePlugins } from "./plugin/graph.js";
import { JobQueue } from "./queue/job-queue.js";
import { registerJobsRoute } from "./queue/jobs-route.js";
import { queueMigrations } from "./queue/migrations.js";
import { Scheduler } from "./scheduler.js";
import { MIN_API_KEY_LENGTH } from "./security/api-key.js";
import { assignClientAddress, clientIp } from "./security/client-ip.js";
import { compileTrustProxy } from "./security/trust-proxy.js";
import { type CsrfTokens, createCsrfTokens } from "./security/csrf.js";
import { registerCsrfRoute } from "./security/csrf-route.js";
import { LockoutTracker } from "./security/lockout.js";
import { MemoryRateLimitStore } from "./security/rate-limit.js";
import { LeaseFile } from "./leases/lease-file.js";
import { Leases } from "./leases/leases.js";
import { ServiceRegistry } from "./services.js";
import { restrictDataDir } from "./storage/data-dir-modes.js";
import { loadOrCreateSecret } from "./storage/data-folder.js";
import { VellumStorage } from "./storage/storage.js";
import type { MigrateOutcome, Vellum } from "./instance.js";

/** `@vellum/core`'s own version: what `/health` reports when the host passes none (embedded use). */
const CORE_VERSION = (createRequire(import.meta.url)("../package.json") as { version: string }).version;

export type { FetchOptions, MigrateOutcome, Vellum } from "./instance.js";

/** Creates a Vellum instance. Reads no environment and no config files: everything comes in `config`. */
export function createVellum(input: VellumConfig): Vellum {
  if (!input.dataDir) throw CoreErrors.configInvalid(["dataDir", "a data directory is required"]);
  if (input.leaseMs !== undefined && !(Number.isInteger(input.leaseMs) && input.leaseMs >= 1000))
    throw CoreErrors.configInvalid(["leaseMs", "expected an integer of at least 1000 (milliseconds)"]);
  const config: VellumConfig = { ...input };
  const trustProxy = compileTrustProxy(config.security?.trustProxy);
  const logger = config.logger ?? createConsola({ level: config.logLevel ?? 3 }).withTag("vellum");
  const metrics = createMetrics();
  const coreMetrics = registerCoreMetrics(metrics);
  const features = new Set(config.features ?? []);
  const hookRegistry: Array<() => void> = [];
  const storage = new VellumStorage(config.dataDir, config.storage);
  const components = new HealthRegistry();
  const store = config.security?.rateLimitStore ?? new MemoryRateLimitStore();
  const lockout = new LockoutTracker(store, config.security?.lockout ?? {}, () => coreMetrics.lockouts.inc());
  const services = new ServiceRegistry();
  const lifecycle = new LifecycleCallbacks();
  const commands = new CommandHandlers();
  const apiKey = config.security?.apiKey;

  let state: LifecycleState = "created";
  let inFlight = 0;
  let csrf: CsrfTokens | undefined;
  let database: VellumDatabase | undefined;
  /** Where the leases of the processes sharing the database live (`Leases`). */
  let leaseFile: LeaseFile | undefined;
  let queue: JobQueue | undefined;
  let migrations: MigrationRunner | undefined;
  let order: string[] = [];

  const storageFailures = createStorageFailureLog(logger, (failure) => {
    if (failure.kind === "damaged") database?.markDamaged(failure.code);
  });
  const captureError: KernelParts["captureError"] = (error, info) => {
    const where = info.hook ? `${info.plugin} ${info.hook}` : info.plugin;
    const what = info.hook ? `hook ${info.hook}` : "background task";
    const reported = storageFailures.report(error, `${what} of ${info.plugin}`);
    if (reported === undefined) logger.withTag(info.plugin).error(`${what} failed`, error);
    if (info.hook) coreMetrics.hookFailures.inc({ plugin: info.plugin, hook: info.hook });
    if (info.hook === "vellum:error" || reported === false) return;
    const hook = info.hook ? { hook: info.hook } : {};
    void bus.call("vellum:error", { error, plugin: info.plugin, ...hook, tags: { where, ...info.tags } });
  };
  const bus = new VellumHookBus(captureError);
  for (const plugin of config.plugins ?? []) {
    if (!plugin) continue;
    for (const [name, kind] of Object.entries(plugin.definition.hooks ?? {})) bus.declare(plugin.name, name, kind);
  }

  const app: H3 = new H3({
    silent: true,
    onRequest: (event) => pipeline.onRequest(event),
    onError: (error, event) => pipeline.onError(error, event),
  });
  const routes = new RouteTable(app);
  const cors = createCorsPolicy(config.corsOrigins ?? []);
  const observe = createRequestObserver(coreMetrics, logger.withTag("http"), config.accessLog ?? true);
  const shortcuts = new Shortcuts({
    ready: () => state === "ready",
    cors,
    observe,
    report: (error, plugin) => captureError(error, { plugin, tags: { step: "shortcut" } }),
  });
  const pipeline = createPipeline({
    state: () => state,
    routes,
    cors,
    store,
    lockout,
    apiKey,
    csrf: () => csrf,
    trustProxy,
    features,
    logger: logger.withTag("http"),
    observe,
    secureCookies: (config.baseUrl ?? "").startsWith("https:"),
    basePath: basePathOf(config.baseUrl),
    debug: config.debug ?? false,
    bus,
    reportError(error: unknown, event: H3Event) {
      const where = `${event.req.method} ${event.url.pathname} (request ${requestId(event)})`;
      const reported = storageFailures.report(error, where);
      if (reported === false) return;
      if (reported === undefined) logger.withTag("http").error(`unhandled error in ${where}`, error);
      void bus.call("http:error", { event, error });
      void bus.call("vellum:error", { error, tags: { request_id: requestId(event) } });
    },
  });
  app.use(pipeline.middleware);
  routes.add("core", "GET", "/docs/api/errors", () => errorsPage(), { csrfCookie: true, schema: ERRORS_PAGE_SCHEMA });
  registerCsrfRoute(routes, () => csrf);
  registerJobsRoute(routes, () => requireInit(queue, "jobs"));

  const kernel: KernelInfo = {
    state: () => state,
    startedAt: new Date(),
    version: config.version ?? CORE_VERSION,
    migrationStatus: () => requireInit(migrations, "migrationStatus").status(),
    routes: () => routes.list(),
    components: () => components.list(),
    jobs: {
      stats: () => requireInit(queue, "jobs").stats(),
      queues: () => requireInit(queue, "jobs").queues(),
      workedHere: (name) => queue?.workedHere(name) ?? false,
    },
    security: {
      apiKeyConfigured: Boolean(apiKey),
      apiKeyStrong: Boolean(apiKey && apiKey.length >= MIN_API_KEY_LENGTH),
      csrfEnabled: true,
      trustProxy: trustProxy.description,
      lockout: lockout.options,
      activeLockouts: () => lockout.active(),
      counterStore: () => store.status?.() ?? { kind: "custom", state: "ok" },
      checkKey: (event) => pipeline.checkKey(event),
    },
    clientIp: (event) => clientIp(event, trustProxy),
    inFlight: () => inFlight,
  };
  const leases = new Leases({
    ...(config.leaseMs !== undefined && { ttlMs: config.leaseMs }),
    onError: (error) => captureError(error, { plugin: "core", tags: { step: "leases" } }),
  });
  const scheduler = new Scheduler({
    leases,
    onError: (error, info) => {
      coreMetrics.jobFailures.inc({ job: info.job });
      captureError(error, { plugin: info.job.split(":")[0] ?? "core", tags: { job: info.job } });
    },
  });
  const hooks = createHookApi(bus, "host", hookRegistry);

  function requireInit<T>(value: T | undefined, what: string): T {
    if (value === undefined) throw CoreErrors.notReady([what]);
    return value;
  }

  async function doInit(): Promise<void> {
    state = "starting";
    const plugins = resolvePlugins(config.plugins ?? []);
    order = plugins.map((p) => p.name);
    logger.debug(`starting with data dir ${config.dataDir}; plugins in setup order: ${order.join(", ") || "none"}`);
    await prepareDataDir(plugins, config, logger);
    mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
    const sqlite = config.database?.sqlite ?? { path: join(config.dataDir, "db", "vellum.sqlite") };
    if (sqlite.path !== ":memory:") mkdirSync(dirname(sqlite.path), { recursive: true, mode: 0o700 });
    database = await openSqlite(sqlite, config.database?.onQuery);
    leaseFile = await LeaseFile.open(sqlite.path);
    await restrictDataDir(config.dataDir, sqlite.path === ":memory:" ? undefined : sqlite.path);
    const db = database.kysely;
    migrations = new MigrationRunner(db);
    migrations.register("core", queueMigrations);
    const writes = new Writes(db, bus, captureError);
    queue = new JobQueue({
      db,
      writes,
      deferSync: database.ops.withDeferredSync,
      logger: logger.withTag("queue"),
      leases,
      dataVersion: database.ops.dataVersion,
      onError: (error, { owner, queue: name, jobId }) =>
        captureError(error, { plugin: owner, tags: { queue: name, ...(jobId ? { job: jobId } : {}) } }),
    });
    registerQueueMetrics(metrics, queue);
    scheduler.schedule("core:prune-jobs", { everyMs: 60 * 60_000, jitterMs: 60_000 }, async () => {
      await queue?.prune(24 * 60 * 60_000);
    });
    csrf = createCsrfTokens(config.security?.csrfSecret ?? (await loadOrCreateSecret(config.dataDir, "csrf-secret")));
    const parts: KernelParts = {
      config,
      logger,
      bus,
      hookRegistry,
      database,
      writes,
      storage,
      metrics,
      queue,
      scheduler,
      routes,
      shortcuts,
      migrations,
      services,
      lifecycle,
      commands,
      components,
      features,
      kernel,
      captureError,
    };
    const byName = new Map<string, AnyVellumPlugin>(plugins.map((p) => [p.name, p]));
    const timeoutMs = config.setupTimeoutMs ?? 10_000;
    for (const plugin of plugins) {
      const ctx = createPluginContext(plugin, parts, byName);
      const began = performance.now();
      try {
        await withTimeout(Promise.resolve(plugin.definition.setup(ctx)), timeoutMs, () =>
          CoreErrors.pluginSetupTimeout([plugin.name, timeoutMs], { plugin: plugin.name }),
        );
        logger.debug(`plugin ${plugin.name} set up in ${(performance.now() - began).toFixed(1)} ms`);
      } catch (cause) {
        if (VellumError.is(cause) && cause.plugin === plugin.name) throw cause;
        const reason = cause instanceof Error ? cause.message : String(cause);
        throw CoreErrors.pluginSetupFailed([plugin.name, reason], { plugin: plugin.name, cause });
      }
    }
  }

  async function doMigrate(): Promise<MigrateOutcome> {
    await init();
    const runner = requireInit(migrations, "migrate");
    if (config.migrate === false) {
      const pending = (await runner.status()).pending.map((p) => `${p.plugin}/${p.name}`);
      return pending.length > 0 ? { results: [], error: CoreErrors.migrationsPending([pending]) } : { results: [] };
    }
    const outcome = await runner.migrate(["core", ...order]);
    for (const result of outcome.results) logger.debug(`migration ${result.plugin}/${result.name} ${result.status}`);
    if (outcome.results.length === 0) logger.debug("migrations: none pending");
    const { drift } = await runner.status();
    for (const d of drift)
      logger.warn(CoreErrors.migrationDrift([d.plugin, `${d.name} is ${d.kind.replace(/_/g, " ")}`]).message);
    return outcome;
  }

  async function doReady(): Promise<void> {
    const outcome = await migrate();
    if (outcome.error) throw outcome.error;
    await lifecycle.run("start", order);
    await routes.prepareValidators();
    await leases.start(requireInit(leaseFile, "leases"));
    requireInit(queue, "queue").start();
    scheduler.start();
    state = "ready";
    await lifecycle.run("ready", order);
    await bus.call("vellum:ready", {});
    logger.debug("ready: queue workers and the scheduler are running");
  }

  async function doClose(): Promise<void> {
    const began = performance.now();
    state = "closing";
    logger.info(`shutting down (${inFlight} request(s) in flight)`);
    const deadline = Date.now() + (config.shutdownTimeoutMs ?? 10_000);
    while (inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    const report = (error: Error) => logger.error(error.message, error.cause);
    try {
      await lifecycle.run("preClose", order, report);
      await scheduler.stop();
      await queue?.stop();
      await leases.stop();
      leaseFile?.close();
      await lifecycle.run("close", order, report);
      await bus.call("vellum:close", {});
      for (const off of hookRegistry.splice(0)) off();
      await storage.dispose();
    } finally {
      // Also when a step above failed: an open connection (a Redis client) would keep the process alive.
      await store.close?.();
      await database?.close();
    }
    state = "closed";
    logger.info(`shut down in ${(performance.now() - began).toFixed(0)} ms`);
  }

  // Each step runs once; later calls share its promise. A failed ready() closes the instance.
  const initOnce = once(doInit);
  const init = () =>
    state === "closing" || state === "closed" ? Promise.reject(CoreErrors.closed(["init"])) : initOnce();
  const migrate = once(doMigrate);
  const ready = once(() =>
    doReady().catch(async (error: unknown) => {
      await close().catch(() => undefined);
      throw error;
    }),
  );
  const close = once(doClose);

  /** A request through the router and the pipeline (no shortcut answered it). */
  async function routed(request: Request): Promise<Response> {
    inFlight++;
    try {
      return await app.fetch(request);
    } finally {
      inFlight--;
    }
  }

  const instance: Vellum = {
    config,
    hooks,
    metrics,
    storage: storage.root,
    async fetch(request, options) {
      if (options?.clientAddress) assignClientAddress(request, options.clientAddress);
      if (options?.mountPrefix) assignMountPrefix(request, options.mountPrefix);
      return shortcuts.fetch(request) ?? routed(request);
    },
    init,
    migrate,
    migrationStatus: kernel.migrationStatus,
    ready,
    close,
    state: () => state,
    service: (key) => services.get(key),
    db: () => requireInit(database, "db").kysely,
    database: () => requireInit(database, "database").ops,
    queue: () => requireInit(queue, "queue"),
    plugins: () => order,
    async runCommand(name, io) {
      const offline = offlineCommand(config.plugins ?? [], name);
      if (offline) return (await offline.run(io, offlineContext(offline.plugin, config, logger))) ?? 0;
      await init();
      return (await commands.get(name)(io)) ?? 0;
    },
    handles: (pathname) => routes.allowed(pathname).length > 0,
    get handler() {
      handler ??= createNodeListener({
        fetch: routed,
        handles: instance.handles,
        shortcut: (req, res) => shortcuts.node(req, res),
      });
      return handler;
    },
    listen: (options) => listen(instance, options),
  };
  let handler: NodeListener | undefined;
  return instance;
}
