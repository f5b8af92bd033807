import { type RouteSchema, Type } from "@vellum/core";

// What the operator routes accept and answer, as the OpenAPI reference documents them.

const TAGS = ["webhooks"];
const Timestamp = Type.String({ format: "date-time" });
/** A delivery's id: a ULID (Crockford base 32, upper case). */
const DELIVERY_ID = "^[0-9A-HJKMNP-TV-Z]{26}$";

const Delivery = Type.Object({
  id: Type.String({ description: "The delivery: one event to one receiver (what a replay's `id` takes)" }),
  event_id: Type.String({
    description: "The event (`X-Service-Delivery`), shared by its deliveries to every receiver",
  }),
  event: Type.String({ description: "The event type" }),
  receiver: Type.String({ description: "The receiver's host, never its path or query" }),
  status: Type.Enum(["pending", "retrying", "delivered", "skipped", "dead"]),
  attempts: Type.Integer({ minimum: 0, description: "Attempts made so far, the successful one included" }),
  response_code: Type.Union([Type.Integer(), Type.Null()], {
    description: "The receiver's answer to the last attempt; null when it never answered",
  }),
  last_error: Type.Union([Type.String(), Type.Null()], { description: "The last failure, e.g. `HTTP 503 from …`" }),
  created_at: Timestamp,
  updated_at: Timestamp,
  next_attempt_at: Type.Union([Timestamp, Type.Null()], {
    description: "When the next attempt is due, for a delivery not done yet",
  }),
});

const DeliveriesQuery = Type.Object({
  status: Type.Optional(
    Type.Enum(["pending", "delivered", "dead"], {
      description: "`pending` (waiting, retries included), `delivered` (skipped included) or `dead`",
    }),
  ),
  receiver: Type.Optional(
    Type.String({ description: "A configured receiver's host (`<host>#2` for a second) or URL" }),
  ),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50, description: "Deliveries per page" })),
  before: Type.Optional(
    Type.String({ pattern: DELIVERY_ID, description: "A delivery id: the page of deliveries older than it (`next`)" }),
  ),
});

export const deliveriesSchema: RouteSchema = {
  summary: "Webhook deliveries, newest first, a page at a time",
  description: "Never shows a body or a secret. Takes the API key as `Authorization: Bearer` or `X-API-Key`.",
  tags: TAGS,
  query: DeliveriesQuery,
  response: {
    200: {
      description: "A page of deliveries; `next` is the last one's id when the page is full, else null",
      body: Type.Object({
        deliveries: Type.Array(Delivery),
        next: Type.Union([Type.String(), Type.Null()]),
      }),
    },
    404: { description: "`receiver` names no configured receiver" },
  },
};

export const ReplayBody = Type.Object({
  id: Type.Optional(Type.String({ description: "A delivery id: replay that delivery if it is dead" })),
  receiver: Type.Optional(
    Type.String({ description: "A configured receiver's host or URL: replay its dead deliveries" }),
  ),
});

export const replaySchema: RouteSchema = {
  summary: "Requeues dead webhook deliveries: all, one, or one receiver's",
  description:
    "No body or `{}` replays every dead delivery; both `id` and `receiver`, that delivery if it belongs to " +
    "that receiver. Takes the API key as `Authorization: Bearer` or `X-API-Key`, without CSRF.",
  body: ReplayBody,
  bodyOptional: true,
  tags: TAGS,
  response: {
    200: {
      description: "How many dead deliveries went back to pending",
      body: Type.Object({ replayed: Type.Integer({ minimum: 0 }) }),
    },
    404: { description: "`receiver` names no configured receiver" },
  },
};
