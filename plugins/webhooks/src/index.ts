export type { DeliveryStatus, DeliveryView } from "./deliveries.js";
export type { DeliveryResult } from "./dispatcher.js";
export type { DeliveryPayload } from "./outbox.js";
export type { WebhookEvent, WebhookEventType } from "./events.js";
export type { DeliveryOutcome } from "./metrics.js";
export type { WebhooksOptions } from "./options.js";
export { webhooks } from "./plugin.js";
export { type VerifyFailure, type VerifyOptions, type VerifyResult, signWebhook, verifyWebhook } from "./verify.js";
export type { WebhookHeaders } from "./verify.js";
