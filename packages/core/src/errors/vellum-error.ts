/**
 * Errors for boot, configuration and programming mistakes (not for clients). Codes are
 * `VELLUM_<AREA>_<WHAT>`; messages name the offending thing and how to fix it.
 */
export class VellumError extends Error {
  override readonly name = "VellumError";
  readonly code: string;
  readonly plugin: string | undefined;
  readonly data: Record<string, unknown> | undefined;

  constructor(
    code: string,
    message: string,
    options: { plugin?: string; data?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.plugin = options.plugin;
    this.data = options.data;
  }

  static is(value: unknown, code?: string): value is VellumError {
    return (
      value instanceof Error &&
      value.name === "VellumError" &&
      (code === undefined || (value as VellumError).code === code)
    );
  }
}

/** Builds a typed constructor for one internal error code (fastify/avvio style). */
export function createErrorType<A extends unknown[]>(code: string, message: (...args: A) => string) {
  const make = (args: A, options: { plugin?: string; cause?: unknown } = {}) =>
    new VellumError(code, message(...args), options);
  return Object.assign(make, { code });
}

export const CoreErrors = {
  pluginDuplicate: createErrorType(
    "VELLUM_PLUGIN_DUPLICATE",
    (name: string) => `plugin '${name}' is registered twice; remove one of the two entries`,
  ),
  pluginDependencyMissing: createErrorType(
    "VELLUM_PLUGIN_DEPENDENCY_MISSING",
    (name: string, dep: string) =>
      `plugin '${name}' depends on '${dep}', which is not registered; add ${dep}() to plugins or remove the dependency`,
  ),
  pluginDependencyCycle: createErrorType(
    "VELLUM_PLUGIN_DEPENDENCY_CYCLE",
    (cycle: string[]) => `plugin dependencies form a cycle: ${cycle.join(" -> ")}`,
  ),
  pluginSetupFailed: createErrorType(
    "VELLUM_PLUGIN_SETUP_FAILED",
    (name: string, reason: string) => `plugin '${name}' failed during setup: ${reason}`,
  ),
  pluginSetupTimeout: createErrorType(
    "VELLUM_PLUGIN_SETUP_TIMEOUT",
    (name: string, ms: number) => `plugin '${name}' did not finish setup within ${ms} ms`,
  ),
  pluginHookFailed: createErrorType(
    "VELLUM_PLUGIN_HOOK_FAILED",
    (name: string, hook: string, reason: string) => `plugin '${name}' failed in ${hook}: ${reason}`,
  ),
  hookDuplicate: createErrorType(
    "VELLUM_HOOK_DUPLICATE",
    (name: string, first: string, second: string) => `hook '${name}' is declared by both '${first}' and '${second}'`,
  ),
  hookUndeclared: createErrorType(
    "VELLUM_HOOK_UNDECLARED",
    (name: string, plugin: string, closest: string | undefined) =>
      `plugin '${plugin}' subscribes to hook '${name}', which no installed plugin declares` +
      (closest ? `; did you mean '${closest}'?` : ""),
  ),
  hookCommitCall: createErrorType(
    "VELLUM_HOOK_COMMIT_CALL",
    (name: string) => `hook '${name}' runs inside a write's transaction: emit it with w.commit() in ctx.write()`,
  ),
  hookRequired: createErrorType(
    "VELLUM_HOOK_REQUIRED",
    (name: string, kind: string) =>
      `hook '${name}' is ${kind}; only commit hooks take a required subscriber (its failure fails the write)`,
  ),
  componentDuplicate: createErrorType(
    "VELLUM_HEALTH_COMPONENT_DUPLICATE",
    (name: string, first: string, second: string) =>
      `health component '${name}' is registered by both '${first}' and '${second}'`,
  ),
  serviceDuplicate: createErrorType(
    "VELLUM_SERVICE_DUPLICATE",
    (key: string, first: string, second: string) => `service '${key}' is provided by both '${first}' and '${second}'`,
  ),
  serviceUndeclared: createErrorType(
    "VELLUM_SERVICE_UNDECLARED",
    (key: string, plugin: string) =>
      `plugin '${plugin}' injects service '${key}', which no plugin it depends on provides; add the provider to dependsOn`,
  ),
  commandDuplicate: createErrorType(
    "VELLUM_COMMAND_DUPLICATE",
    (name: string, first: string, second: string) =>
      `command 'vellum ${name}' is declared by both '${first}' and '${second}'`,
  ),
  routeDuplicate: createErrorType(
    "VELLUM_ROUTE_DUPLICATE",
    (method: string, path: string, first: string, second: string) =>
      `route ${method} ${path} is registered by both '${first}' and '${second}'`,
  ),
  migrationFailed: createErrorType(
    "VELLUM_MIGRATION_FAILED",
    (plugin: string, migration: string, reason: string) => `migration ${plugin}/${migration} failed: ${reason}`,
  ),
  migrationsPending: createErrorType(
    "VELLUM_MIGRATIONS_PENDING",
    (list: string[]) => `migrations are pending and migrate is off: ${list.join(", ")}; run 'vellum migrate'`,
  ),
  migrationDrift: createErrorType(
    "VELLUM_MIGRATION_DRIFT",
    (plugin: string, detail: string) => `migration drift in plugin '${plugin}': ${detail}`,
  ),
  configInvalid: createErrorType(
    "VELLUM_CONFIG_INVALID",
    (path: string, reason: string) => `invalid configuration at ${path}: ${reason}`,
  ),
  jobsTaken: createErrorType(
    "VELLUM_QUEUE_JOBS_TAKEN",
    (queue: string) =>
      `jobs of queue '${queue}' were applied by another process while this one applied them; its batch was rolled back`,
  ),
  notReady: createErrorType("VELLUM_NOT_READY", (what: string) => `${what} is not available before ready()`),
  closed: createErrorType("VELLUM_CLOSED", (what: string) => `${what} was called after close()`),
} as const;
