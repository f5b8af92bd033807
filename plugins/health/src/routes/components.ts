import { storageBody } from "../checks/storage.js";
import type { Inspector } from "../inspector.js";
import { json } from "../respond.js";
import type { WalUpkeep } from "../wal-upkeep.js";
import { databaseSchema, storageSchema, workersSchema } from "./schemas.js";

const plain = { auth: "none" } as const;

/** `/health/db`, `/health/workers` and `/health/storage`: the components this plugin checks itself. */
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
    { ...plain, schema: databaseSchema },
  );

  ctx.router.get(
    "/health/workers",
    async () => {
      const queue = await inspector.queue();
      const { state, ...rest } = queue;
      return json({ status: state, ...rest }, state === "unavailable" ? 503 : 200);
    },
    { ...plain, schema: workersSchema },
  );

  ctx.router.get(
    "/health/storage",
    async () => {
      const storage = await inspector.storage();
      const failing = storage.status === "full" || storage.status === "unavailable";
      return json(storageBody(storage), failing ? 503 : 200);
    },
    { ...plain, schema: storageSchema },
  );
}
