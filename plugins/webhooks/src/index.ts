export type { DeliveryStatus, DeliveryView } from "./deliveries.js";
export type { DeliveryPayload, DeliveryResult } from "./dispatcher.js";
export type { WebhookEvent, WebhookEventType } from "./events.js";
export type { DeliveryOutcome } from "./metrics.js";
export type { WebhooksOptions } from "./options.js";
export { webhooks } from "./plugin.js";
export { type VerifyFailure, type VerifyOptions, type VerifyResult, signWebhook, verifyWebhook } from "./verify.js";
export type { WebhookHeaders } from "./verify.js";
