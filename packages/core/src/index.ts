/** Kysely's SQL template and types, so plugins build queries with the kernel's own copy. */
export { type CompiledQuery, type Kysely, sql, type Transaction } from "kysely";
export { defineConfig, type SecurityConfig, type VellumConfig } from "./config.js";
export {
  type AppliedMigration,
  type Migration,
  type MigrationDrift,
  type MigrationResult,
  type MigrationSet,
  type MigrationStatus,
  migrationChecksum,
  migrationTableName,
} from "./db/migrations.js";
export { PreparedColumn, PreparedQuery } from "./db/prepared.js";
export type { DatabaseConfig, DatabaseOps, JobsTable, KernelTables, SqliteOptions } from "./db/types.js";
export { type CommitFlush, type CommitHookName, collectForCommit, type Write } from "./db/write.js";
export {
  API_ERROR_DESCRIPTIONS,
  API_ERROR_STATUS,
  ApiError,
  type ApiErrorCode,
  type ApiErrorDetail,
  validationFailed,
} from "./errors/api-error.js";
export { CoreErrors, createErrorType, VellumError } from "./errors/vellum-error.js";
export type {
  ComponentReport,
  ComponentState,
  EthicsClaims,
  HealthComponent,
  RegisteredComponent,
} from "./health/components.js";
export type { HookKind, HookOptions, VellumHookApi } from "./hooks/hooks.js";
export type {
  ArticleRecord,
  HookName,
  HookPayload,
  OperationContext,
  StorageChange,
  VellumErrorEvent,
  VellumHooks,
} from "./hooks/types.js";
export { MAX_JSON_BYTES, readJsonBody } from "./http/body.js";
export { errorResponse } from "./http/envelope.js";
export { isReply, json, Reply, rawJson, text } from "./http/json.js";
export { intQuery, pathParam } from "./http/params.js";
export type { KeyCheck, LifecycleState } from "./http/pipeline.js";
export { requestId } from "./http/request-id.js";
export type { HttpMethod, PluginRouter, RouteHandler, RouteMeta, RouteRecord } from "./http/routes.js";
export type { VellumMetrics } from "./metrics/metrics.js";
export {
  type CommandHandler,
  type CommandIO,
  type DeclaredCommand,
  declaredCommands,
  matchCommand,
} from "./plugin/commands.js";
export type { KernelInfo, LifecycleCallback, PluginDb, VellumPluginContext } from "./plugin/context.js";
export {
  type AnyVellumPlugin,
  definePlugin,
  defineVellumPlugin,
  type VellumPlugin,
  type VellumPluginDefinition,
} from "./plugin/define.js";
export { resolvePlugins } from "./plugin/graph.js";
export {
  checkSettings,
  type Parsed,
  parseList,
  readSettingsFromEnv,
  type SettingDeclaration,
  type SettingDeclarations,
  type SettingProblem,
  setting,
  settingDefaults,
} from "./plugin/settings.js";
export type { JobQueue } from "./queue/job-queue.js";
export type { PluginQueue } from "./queue/plugin-queue.js";
export type {
  DeliveryHandler,
  JobRecord,
  JobStatus,
  ProcessOptions,
  QueueStats,
  TransactionalHandler,
} from "./queue/types.js";
export { MIN_API_KEY_LENGTH } from "./security/api-key.js";
export { clientIp, isLoopback } from "./security/client-ip.js";
export type { LockoutOptions } from "./security/lockout.js";
export { MemoryRateLimitStore, type RateLimitRule, type RateLimitStore } from "./security/rate-limit.js";
export type { ArticlesService, VellumServices } from "./services.js";
export { loadOrCreateSecret } from "./storage/data-folder.js";
export { directoryBytes, type WalkedFile, walkFiles } from "./storage/walk.js";
export { createVellum, type MigrateOutcome, type Vellum } from "./vellum.js";
