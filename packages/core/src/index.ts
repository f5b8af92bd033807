/** Kysely's SQL template and types, so plugins build queries with the kernel's own copy. */
export { type CompiledQuery, type Kysely, sql, type Transaction } from "kysely";
/** TypeBox, to declare route schemas (JSON Schema with static types) with the kernel's own copy. */
export { type Static, type TObject, type TSchema, Type } from "typebox";
/** h3's event type, so plugins type their handlers without depending on h3 themselves. */
export type { H3Event } from "h3";
export { defineConfig, type SecurityConfig, type VellumConfig } from "./config.js";
export { checkSlug, SLUG_PATTERN, slugSchema } from "./content/slug.js";
export { migrationChecksum, migrationTableName } from "./db/migrations.js";
export type { AppliedMigration, Migration, MigrationDrift, MigrationResult } from "./db/migrations.js";
export type { MigrationSet, MigrationStatus } from "./db/migrations.js";
export { PreparedColumn, PreparedInsert, PreparedQuery } from "./db/prepared.js";
export { deleteInChunks } from "./db/chunked-delete.js";
export type {
  DatabaseConfig,
  DatabaseDamage,
  DatabaseOps,
  JobsTable,
  KernelTables,
  QueryListener,
  SqliteOptions,
} from "./db/types.js";
export { type CollectOptions, type CommitFlush, type CommitHookName, collectForCommit } from "./db/write.js";
export { readSnapshot } from "./db/read-snapshot.js";
export { acquireFileLock, type FileLock, fileLockHeld, type FileLockOptions } from "./leases/file-lock.js";
export { RequiredFlushError, type Write } from "./db/write.js";
export { API_ERROR_DESCRIPTIONS, API_ERROR_STATUS, ApiError, validationFailed } from "./errors/api-error.js";
export type { ApiErrorCode, ApiErrorDetail } from "./errors/api-error.js";
export { CoreErrors, createErrorType, VellumError } from "./errors/vellum-error.js";
export type { ComponentReport, ComponentState, EthicsClaims } from "./health/components.js";
export type { HealthComponent, RegisteredComponent } from "./health/components.js";
export type { HookKind, HookOptions, VellumHookApi } from "./hooks/hooks.js";
export type { ArticleRecord, HookName, HookPayload, OperationContext } from "./hooks/types.js";
export type { StorageChange, VellumErrorEvent, VellumHooks } from "./hooks/types.js";
export { MAX_JSON_BYTES, readJsonBody, requestBodyStream } from "./http/body.js";
export { errorResponse } from "./http/envelope.js";
export { isReply, json, Reply, rawJson, text } from "./http/json.js";
export { mountPrefix, publicPath } from "./http/mount.js";
export { intQuery, pathParam } from "./http/params.js";
export type { KeyCheck, LifecycleState } from "./http/pipeline.js";
export { requestId } from "./http/request-id.js";
export { HTML_CSP } from "./http/security-headers.js";
export { effectiveAuth, matchedRoute } from "./http/routes.js";
export type {
  HttpMethod,
  MatchedRoute,
  OperatorAction,
  PluginRouter,
  RouteHandler,
  RouteMeta,
  RouteRecord,
} from "./http/routes.js";
export type { ResponseSchema, RouteSchema } from "./http/route-schema.js";
export { requestTarget } from "./http/shortcuts.js";
export type { PreparedResponse, Shortcut, ShortcutRequest } from "./http/shortcuts.js";
export { ulidFactory, ulidTime } from "./ids.js";
export type { VellumMetrics } from "./metrics/metrics.js";
export { declaredCommands, matchCommand, offlineCommand } from "./plugin/commands.js";
export type {
  CommandDeclaration,
  CommandHandler,
  CommandIO,
  CommandOptionDeclaration,
  DeclaredCommand,
} from "./plugin/commands.js";
export type { KernelInfo, LifecycleCallback, PluginDb, VellumPluginContext } from "./plugin/context.js";
export { definePlugin, defineVellumPlugin } from "./plugin/define.js";
export type { AnyVellumPlugin, VellumPlugin, VellumPluginDefinition } from "./plugin/define.js";
export { resolvePlugins } from "./plugin/graph.js";
export { databasePath, offlineContext, prepareDataDir } from "./plugin/offline.js";
export type { OfflineCommandHandler, PluginOfflineContext } from "./plugin/offline.js";
export { checkSettings, parseList, readSettingsFromEnv, setting, settingDefaults } from "./plugin/settings.js";
export type { Parsed, SettingDeclaration, SettingDeclarations, SettingProblem } from "./plugin/settings.js";
export type { JobQueue } from "./queue/job-queue.js";
export type { PluginQueue } from "./queue/plugin-queue.js";
export type { DeliveryHandler, JobRecord, JobStatus, NewJob, ProcessOptions } from "./queue/types.js";
export type { JobFilter, KeyStats, QueueStats, TransactionalHandler } from "./queue/types.js";
export { MIN_API_KEY_LENGTH } from "./security/api-key.js";
export { clientIp, isLoopback } from "./security/client-ip.js";
export { compileTrustProxy, describeTrustProxy, trustEntryProblem } from "./security/trust-proxy.js";
export type { TrustProxy, TrustProxyDescription, TrustProxySetting } from "./security/trust-proxy.js";
export type { LockoutOptions } from "./security/lockout.js";
export {
  MemoryRateLimitStore,
  type RateLimitRule,
  type RateLimitStore,
  type RateLimitStoreStatus,
} from "./security/rate-limit.js";
export type { ArticlesService, StorageQuotaService, VellumServices } from "./services.js";
export { loadOrCreateSecret, publishSecretFile } from "./storage/data-folder.js";
export { type MaybePromise, thenNow } from "./then-now.js";
export { directoryBytes, type WalkedFile, walkFiles } from "./storage/walk.js";
export { createVellum, type FetchOptions, type MigrateOutcome, type Vellum } from "./vellum.js";
