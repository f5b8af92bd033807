import { reported } from "../checks/reports.js";
import { isFault } from "../checks/state.js";
import { storageBody } from "../checks/storage.js";
import { componentStates, type Inspector, REPORTED_COMPONENTS } from "../inspector.js";
import { json } from "../respond.js";
import type { WalUpkeep } from "../wal-upkeep.js";

const plain = { auth: "none" } as const;

const numberOrNull = (value: unknown) => (typeof value === "number" && Number.isFinite(value) ? value : null);
const stringOrNull = (value: unknown) => (typeof value === "string" ? value : null);
const booleanOrNull = (value: unknown) => (typeof value === "boolean" ? value : null);

/** `/health/db`, `/health/search`, `/health/workers`, `/health/storage` and `/health/dependencies`. */
export function registerComponentRoutes(inspector: Inspector, upkeep: WalUpkeep): void {
  const { ctx } = inspector;

  ctx.router.get(
    "/health/db",
    async () => {
      const db = await inspector.database();
      const body = {
        status: db.state,
        latency_ms: db.latency_ms,
        wal_size_bytes: db.wal_size_bytes,
        size_bytes: db.size_bytes,
        last_checkpoint: upkeep.last() ?? null,
        ...(db.reason ? { reason: db.reason } : {}),
      };
      return json(body, db.state === "ok" ? 200 : 503);
    },
    plain,
  );

  ctx.router.get(
    "/health/search",
    async () => {
      const search = reported(await inspector.reports(), "search");
      const status = search.state === "absent" ? "absent" : search.state === "ok" ? "ok" : "degraded";
      const body = {
        status,
        state: search.state,
        documents: numberOrNull(search.detail.documents),
        indexed_at: stringOrNull(search.detail.indexed_at),
        stale: booleanOrNull(search.detail.stale),
      };
      return json(body, search.state === "unavailable" ? 503 : 200);
    },
    plain,
  );

  ctx.router.get(
    "/health/workers",
    async () => {
      const queue = await inspector.queue();
      const { state, ...rest } = queue;
      return json({ status: state, ...rest }, state === "unavailable" ? 503 : 200);
    },
    plain,
  );

  ctx.router.get(
    "/health/storage",
    async () => {
      const storage = await inspector.storage();
      const failing = storage.status === "full" || storage.status === "unavailable";
      return json(storageBody(storage), failing ? 503 : 200);
    },
    plain,
  );

  ctx.router.get(
    "/health/dependencies",
    async () => {
      const o = await inspector.overview();
      const dependencies: Record<string, Record<string, unknown>> = {
        db: { status: o.db.state, latency_ms: o.db.latency_ms, wal_size_bytes: o.db.wal_size_bytes },
        storage: {
          status: o.storage.status,
          used_ratio: storageBody(o.storage).used_ratio,
          warning: o.storage.warning,
        },
        queue: { status: o.queue.state, queue_depth: o.queue.queue_depth, dead_letter: o.queue.dead_letter },
        migrations: { status: o.migrations.state, drift: o.migrations.drift, pending: o.migrations.pending.length },
      };
      for (const name of REPORTED_COMPONENTS) {
        const r = reported(o.reports, name);
        dependencies[name] = { ...r.detail, status: r.state };
      }
      for (const [name, r] of o.reports) dependencies[name] ??= { ...r.detail, status: r.state };
      const degraded = Object.values(componentStates(o)).some(isFault);
      return json({ status: degraded ? "degraded" : "ok", dependencies });
    },
    plain,
  );
}
