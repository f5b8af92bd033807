import {
  ApiError,
  intQuery,
  type JobStatus,
  type PluginQueue,
  type PluginRouter,
  readJsonBody,
  type RouteMeta,
  type Static,
} from "@vellum/core";
import { type DeliveryView, deliveryView } from "./deliveries.js";
import { findReceiver, type Receiver } from "./receivers.js";
import { deliveriesSchema, type ReplayBody, replaySchema } from "./schemas.js";

export const DELIVERIES_PATH = "/admin/webhooks/deliveries";
export const REPLAY_PATH = "/admin/webhooks/replay";

/** Operator routes take the key as `Authorization: Bearer` or `X-API-Key`, without CSRF (scripts, runbooks). */
const ADMIN: RouteMeta = { auth: "key", csrf: false, apiKeyHeader: true };

const STATUS_FILTER: Record<string, JobStatus> = { pending: "queued", delivered: "applied", dead: "failed" };

/** Which dead work a replay requeues: one delivery, one receiver's, or all (with dead fan-outs). */
export interface ReplayFilter {
  id?: string | undefined;
  receiverUrl?: string | undefined;
}

export interface AdminRouteDeps {
  queue: Pick<PluginQueue<never>, "list">;
  receivers: readonly Receiver[];
  /** Requeues dead work; answers how many jobs. */
  replay(filter: ReplayFilter): Promise<number>;
}

function receiverKey(receivers: readonly Receiver[], reference: string | null, field: string): string | undefined {
  if (reference === null) return undefined;
  const receiver = findReceiver(receivers, reference);
  if (!receiver)
    throw new ApiError("not_found", `No configured receiver is named '${reference.slice(0, 200)}' (${field}).`);
  return receiver.url;
}

/**
 * `GET /admin/webhooks/deliveries?status=pending|delivered|dead&receiver=<host or URL>&limit=&before=`:
 * the newest deliveries first, `next` for the page after. `POST /admin/webhooks/replay
 * {"id"?, "receiver"?}`: requeues dead deliveries (all, one, or one receiver's) and answers how many;
 * without an id, dead fan-outs too.
 */
export function registerAdminRoutes(router: PluginRouter, deps: AdminRouteDeps): void {
  router.get(
    DELIVERIES_PATH,
    async (event) => {
      const params = event.url.searchParams;
      const statusParam = params.get("status");
      const status = statusParam === null ? undefined : STATUS_FILTER[statusParam];
      if (statusParam !== null && status === undefined) {
        throw new ApiError("invalid_parameter", "status must be pending, delivered or dead.");
      }
      const before = params.get("before") ?? undefined;
      if (before !== undefined && !/^[0-9A-HJKMNP-TV-Z]{26}$/.test(before)) {
        throw new ApiError("invalid_parameter", "before must be a delivery id.");
      }
      const limit = intQuery(event, "limit", { min: 1, max: 100, fallback: 50 });
      const key = receiverKey(deps.receivers, params.get("receiver"), "receiver");
      const jobs = await deps.queue.list({ status, key, before, limit });
      const deliveries: DeliveryView[] = jobs.map((job) => deliveryView(job, deps.receivers));
      const next = jobs.length === limit ? (jobs.at(-1)?.id ?? null) : null;
      return { deliveries, next };
    },
    { ...ADMIN, schema: deliveriesSchema },
  );

  router.post(
    REPLAY_PATH,
    async (event) => {
      const { id, receiver } = (await readJsonBody(event)) as Static<typeof ReplayBody>;
      const receiverUrl = receiverKey(deps.receivers, receiver ?? null, "receiver");
      return { replayed: await deps.replay({ id, receiverUrl }) };
    },
    {
      ...ADMIN,
      schema: replaySchema,
      action: { label: "Replay dead deliveries", component: "webhooks" },
    },
  );
}
