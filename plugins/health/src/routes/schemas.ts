import { type RouteSchema, type TSchema, Type } from "@vellum/core";

// The bodies the health routes answer, as the OpenAPI reference documents them. Objects stay open
// (no `additionalProperties: false`): a component's detail is its own, and fields may be added.

const TAGS = ["health"];
const Timestamp = Type.String({ format: "date-time" });
const Bytes = Type.Integer({ minimum: 0 });
const Count = Type.Integer({ minimum: 0 });
const Ratio = Type.Number({ minimum: 0 });
const Nullable = (schema: TSchema, description?: string) =>
  Type.Union([schema, Type.Null()], description === undefined ? {} : { description });

/** A component's state: `absent` is an expected component no installed plugin registers. */
const ComponentState = Type.Enum(["ok", "degraded", "unavailable", "absent"]);

const Health = Type.Object({
  status: Type.Enum(["ok", "degraded"]),
  version: Type.String(),
  uptime_seconds: Count,
  components: Type.Optional(
    Type.Record(Type.String(), ComponentState, {
      description: "Every component's state (and `service` while the kernel is not ready); only when degraded",
    }),
  ),
});

const Ready = Type.Object({
  ready: Type.Boolean(),
  state: Type.Enum(["created", "starting", "ready", "closing", "closed"], {
    description: "The kernel's lifecycle state",
  }),
  checks: Type.Record(Type.String(), ComponentState, {
    description: "`db`, `storage` and every component that counts for readiness, by name",
  }),
});

const Checkpoint = Type.Object({
  at: Timestamp,
  trigger: Type.Enum(["size", "idle"]),
  duration_ms: Type.Number({ minimum: 0 }),
  busy: Type.Boolean({ description: "A reader kept the checkpoint from finishing; it is retried" }),
  wal_bytes_before: Bytes,
  wal_bytes_after: Bytes,
});

const Database = Type.Object({
  status: Type.Enum(["ok", "unavailable"]),
  latency_ms: Nullable(Type.Number({ minimum: 0 })),
  wal_size_bytes: Bytes,
  size_bytes: Bytes,
  last_checkpoint: Nullable(Checkpoint, "The last WAL checkpoint this process ran"),
  reason: Type.Optional(
    Type.Enum(["closed", "damaged", "query_failed", "timeout"], { description: "Why it is unavailable" }),
  ),
});

const Workers = Type.Object({
  status: Type.Enum(["ok", "degraded", "unavailable"]),
  queue_depth: Nullable(Count, "Jobs waiting, all queues together; null when the queue table cannot be read"),
  dead_letter: Nullable(Count, "Jobs in the dead-letter queue, all queues together"),
  running: Type.Boolean({ description: "Whether the workers are running" }),
  workers: Type.Array(
    Type.Object({
      queue: Type.String(),
      queued: Count,
      dead_letter: Count,
      worked_here: Type.Boolean({
        description: "Whether this process works the queue now (several processes on one database: one of them)",
      }),
    }),
  ),
});

const Disk = Type.Object({ total_bytes: Bytes, available_bytes: Bytes, used_ratio: Ratio });

const Storage = Type.Object({
  status: Type.Enum(["ok", "warning", "full", "unavailable"]),
  used_bytes: Bytes,
  quota_bytes: Bytes,
  used_ratio: Ratio,
  warning: Type.Boolean(),
  files_bytes: Bytes,
  accounted: Type.Record(Type.String(), Bytes, { description: "Bytes a plugin accounts for itself, by folder" }),
  database_bytes: Bytes,
  scanned_at: Nullable(Timestamp, "The last full walk of the data dir"),
  writable: Type.Boolean(),
  disk: Nullable(Disk, "The disk holding the data dir; null when unreadable"),
});

const MigrationRef = { plugin: Type.String(), name: Type.String() };
const Migrations = Type.Object({
  status: Type.Enum(["ok", "degraded", "unavailable"]),
  applied: Type.Array(Type.Object({ ...MigrationRef, applied_at: Timestamp })),
  pending: Type.Array(Type.Object(MigrationRef)),
  drift: Type.Boolean(),
  drifted: Type.Array(Type.Object({ ...MigrationRef, kind: Type.Enum(["missing_from_code", "checksum_changed"]) })),
});

const Dependencies = Type.Object({
  status: Type.Enum(["ok", "degraded"]),
  dependencies: Type.Object(
    {
      db: Type.Object({
        status: Type.Enum(["ok", "unavailable"]),
        latency_ms: Nullable(Type.Number({ minimum: 0 })),
        wal_size_bytes: Bytes,
      }),
      storage: Type.Object({ status: Storage.properties.status, used_ratio: Ratio, warning: Type.Boolean() }),
      queue: Type.Object({
        status: Workers.properties.status,
        queue_depth: Nullable(Count),
        dead_letter: Nullable(Count),
      }),
      migrations: Type.Object({ status: Migrations.properties.status, drift: Type.Boolean(), pending: Count }),
      counters: Type.Optional(
        Type.Object(
          {
            status: Type.Enum(["ok", "degraded"]),
            kind: Type.String(),
            detail: Type.Optional(Type.String()),
            summary: Type.Optional(Type.String()),
          },
          { description: "Present when a store shared by every process keeps the rate-limit and lockout counters" },
        ),
      ),
    },
    {
      description: "Also every expected component (`absent`) and every registered one, with the detail it reports",
      additionalProperties: Type.Object({ status: ComponentState }),
    },
  ),
});

const Ethics = Type.Object({
  compliant: Type.Boolean(),
  checks: Type.Object({
    search_queries_logged: Type.Boolean(),
    external_telemetry: Type.Boolean(),
    backups_encrypted: Nullable(Type.Boolean(), "Null while no component claims to keep copies of the data"),
    metrics_local_only: Type.Boolean(),
  }),
  details: Type.Object({
    query_logging: Type.Array(Type.String(), {
      description: "Routes (`METHOD /path`) and components that log queries",
    }),
    telemetry_signals: Type.Array(Type.String(), { description: "Names of telemetry settings in force, never values" }),
    backups: Type.Enum(["none", "encrypted", "unencrypted"]),
    metrics_routes: Type.Array(Type.Object({ path: Type.String(), plugin: Type.String() })),
  }),
});

const Security = Type.Object({
  status: Type.Enum(["ok", "degraded"]),
  checks: Type.Object({
    api_key_configured: Type.Boolean(),
    api_key_strong: Type.Boolean(),
    csrf_enabled: Type.Boolean(),
    lockout_enabled: Type.Boolean(),
    lockouts_active: Nullable(
      Count,
      "Client addresses locked out right now; null when the lockout store cannot be read",
    ),
    trust_proxy: Type.Union([Type.Literal(false), Type.Integer({ minimum: 1 }), Type.Array(Type.String())], {
      description: "`false`, a number of proxy hops, or the trusted addresses and ranges",
    }),
    counter_store: Type.Object(
      {
        kind: Type.String({ description: "`memory`, `redis`, or `custom`" }),
        shared: Type.Optional(Type.Boolean({ description: "Whether every process sees the same counters" })),
        state: Type.Enum(["ok", "degraded"]),
        detail: Type.Optional(Type.String()),
      },
      { description: "Where rate-limit and lockout counters live; degraded while a shared store cannot be reached" },
    ),
  }),
  lockout: Type.Object({
    max_failures: Count,
    window_seconds: Type.Number({ minimum: 0 }),
    duration_seconds: Type.Number({ minimum: 0 }),
  }),
});

const Ai = Type.Object({
  status: Type.Enum(["disabled", "ok", "degraded", "unavailable"]),
  features: Type.Array(Type.String(), { description: "The feature flags on" }),
  endpoints: Type.Array(Type.String(), { description: "The AI routes served, as `METHOD /path`" }),
  detail: Type.Optional(
    Type.Record(Type.String(), Type.Unknown(), { description: "The detail of the component registered as `ai`" }),
  ),
});

const Component = Type.Object(
  {
    status: Type.Enum(["ok", "degraded", "absent"]),
    state: ComponentState,
  },
  { description: "`status` and `state`, then the detail the component reports (its own fields)" },
);

const noStore = "Never stored by intermediaries (`Cache-Control: no-store`)";

export const healthSchema: RouteSchema = {
  summary: "Overall health: ok, or degraded with every component's state",
  description: `Answers before start-up has finished and while shutting down. Always 200. ${noStore}.`,
  tags: TAGS,
  response: { 200: { description: "`ok`, or `degraded` with `components`", body: Health } },
};

export const liveSchema: RouteSchema = {
  summary: "Liveness: the process answers",
  tags: TAGS,
  response: { 200: { description: "Always `{live: true}`", body: Type.Object({ live: Type.Literal(true) }) } },
};

export const readySchema: RouteSchema = {
  summary: "Readiness: the kernel is ready and no readiness check is unavailable",
  tags: TAGS,
  response: {
    200: { description: "Ready", body: Ready },
    503: { description: "Not ready: starting, shutting down, or a readiness check is unavailable", body: Ready },
  },
};

export const databaseSchema: RouteSchema = {
  summary: "The database: latency, WAL and file size, last checkpoint",
  tags: TAGS,
  response: {
    200: { description: "The database answers", body: Database },
    503: {
      description: "The database is closed, damaged, failed or did not answer in time (`reason`)",
      body: Database,
    },
  },
};

export const workersSchema: RouteSchema = {
  summary: "The durable queues: depth and dead letters, per queue",
  tags: TAGS,
  response: {
    200: { description: "`ok`, or `degraded` past the depth or dead-letter limits", body: Workers },
    503: { description: "The queue table cannot be read", body: Workers },
  },
};

export const storageSchema: RouteSchema = {
  summary: "Storage used against the quota, and the data disk",
  tags: TAGS,
  response: {
    200: { description: "`ok`, or `warning` from 80 % of the quota or of the disk", body: Storage },
    503: {
      description: "`full` above 90 % of the quota, or `unavailable` (the data dir is not writable)",
      body: Storage,
    },
  },
};

export const dependenciesSchema: RouteSchema = {
  summary: "Every dependency and component with its detail",
  tags: TAGS,
  response: { 200: { description: "`degraded` when `/health` would be", body: Dependencies } },
};

export const migrationsSchema: RouteSchema = {
  summary: "Applied and pending migrations, and drift from the code",
  tags: TAGS,
  response: {
    200: { description: "`ok`, or `degraded` with pending migrations or drift", body: Migrations },
    503: { description: "The migration tables cannot be read", body: Migrations },
  },
};

export const ethicsSchema: RouteSchema = {
  summary: "The ethics commitments, computed from the running instance",
  tags: TAGS,
  response: { 200: { description: "Whether every commitment holds, and why", body: Ethics } },
};

export const securitySchema: RouteSchema = {
  summary: "The security settings in force and the lockouts active now (never the key)",
  tags: TAGS,
  response: { 200: { description: "`degraded` when a protection is off or unreadable", body: Security } },
};

export const aiSchema: RouteSchema = {
  summary: "The AI feature: flag, endpoints served, and its component's state",
  tags: TAGS,
  response: {
    200: { description: "`disabled` unless the `ai` flag is on; else `ok` or `degraded`", body: Ai },
    503: { description: "The flag is on but nothing serves AI, or its component is unavailable", body: Ai },
  },
};

export const componentSchema: RouteSchema = {
  summary: "One registered component's state and detail",
  description: "A name the operator expects but no installed plugin registers answers `absent` (200).",
  tags: TAGS,
  params: Type.Object({ component: Type.String({ description: "A registered health component's name" }) }),
  response: {
    200: { description: "`ok`, `degraded` or `absent`", body: Component },
    503: { description: "The component is unavailable", body: Component },
    404: { description: "No component has this name" },
  },
};

export const metricsSchema: RouteSchema = {
  summary: "Prometheus metrics, for loopback clients and holders of the API key",
  description: "Anyone else gets 403; a wrong key counts toward the client's lockout.",
  tags: TAGS,
  response: {
    200: { description: "The Prometheus text exposition format (version 0.0.4)", type: "text/plain" },
    403: { description: "Neither a loopback client nor the API key" },
    429: { description: "Locked out after too many failed keys", headers: { "Retry-After": "Seconds to wait" } },
  },
};
