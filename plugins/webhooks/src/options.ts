import { type SettingDeclarations, type SettingProblem, setting } from "@vellum/core";
import { parseDuration } from "./duration.js";

export interface WebhooksOptions {
  /** Receivers: absolute http(s) URLs without credentials. Default none (webhooks off). */
  urls: string[];
  /** HMAC-SHA256 key that signs every delivery; required when `urls` is set. */
  secret?: string;
  /** Milliseconds one attempt may take, connection to last byte of the answer. Default 10 s. */
  timeoutMs: number;
  /** Delays before the retries, as durations (`10s`, `1m`, `2h`); one attempt more than entries, then dead letter. */
  retrySchedule: string[];
  /** Milliseconds delivered events are kept (listed, counted) before they are pruned. Default 7 days. */
  retentionMs: number;
  /** Most deliveries in flight at once, each to a different receiver. Default: one per receiver. */
  concurrency?: number;
}

const SECOND = 1000;
const DAY = 86_400_000;

/** Why `value` cannot be a receiver, or undefined when it can. */
export function receiverProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "is not an absolute URL";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return "is not an http(s) URL";
  if (url.username || url.password) return "carries credentials (receivers verify the signature instead)";
  return undefined;
}

export const WEBHOOKS_SETTINGS: SettingDeclarations<WebhooksOptions> = {
  urls: setting.list({
    env: "SERVICE_WEBHOOK_URLS",
    description: "comma list of receiver URLs (http or https, no credentials); empty turns webhooks off",
    default: [],
    item: receiverProblem,
  }),
  secret: setting.string({
    env: "SERVICE_WEBHOOK_SECRET",
    description: "HMAC-SHA256 key that signs every delivery (at least 16 characters); required with receivers",
    minLength: 16,
    secret: true,
  }),
  timeoutMs: setting.amount({
    env: "SERVICE_WEBHOOK_TIMEOUT_SECONDS",
    description: "seconds one delivery attempt may take before it is cut and retried",
    default: 10 * SECOND,
    unit: "seconds",
    scale: SECOND,
    max: 120,
  }),
  retrySchedule: setting.list({
    env: "SERVICE_WEBHOOK_RETRY_SCHEDULE",
    description: "delays before each retry (ms, s, m, h, d); after the last, the delivery is dead-lettered",
    default: ["10s", "1m", "5m", "30m", "2h", "6h"],
    item: (entry) => (parseDuration(entry) === undefined ? "is not a duration such as 10s, 5m or 2h" : undefined),
  }),
  retentionMs: setting.amount({
    env: "SERVICE_WEBHOOK_RETENTION_DAYS",
    description: "days delivered events are kept for the deliveries list before they are pruned",
    default: 7 * DAY,
    unit: "days",
    scale: DAY,
    max: 365,
  }),
  concurrency: setting.integer({
    env: "SERVICE_WEBHOOK_CONCURRENCY",
    description:
      "most deliveries in flight at once, each to a different receiver (default: one per receiver, so none waits for another)",
    defaultText: "receivers",
    min: 1,
    max: 256,
  }),
};

/** Rules between settings: receivers need the secret, a receiver is listed once, retries are scheduled. */
export function checkWebhooksSettings(options: Readonly<WebhooksOptions>): SettingProblem[] {
  const problems: SettingProblem[] = [];
  if (options.urls.length > 0 && options.secret === undefined) {
    problems.push({ setting: "secret", message: "is required when SERVICE_WEBHOOK_URLS is set" });
  }
  const seen = new Set<string>();
  for (const url of options.urls) {
    if (receiverProblem(url) !== undefined) continue;
    const normalized = new URL(url).href;
    if (seen.has(normalized)) problems.push({ setting: "urls", message: `lists ${new URL(url).host} twice` });
    seen.add(normalized);
  }
  if (options.retrySchedule.length === 0) {
    problems.push({ setting: "retrySchedule", message: "needs at least one delay" });
  }
  return problems;
}
