import { readSettingsFromEnv, settingDefaults } from "@vellum/core";
import { describe, expect, it } from "vitest";
import { parseDuration } from "../src/duration.js";
import { checkWebhooksSettings, WEBHOOKS_SETTINGS, type WebhooksOptions } from "../src/options.js";
import { webhookBackoff } from "../src/retry.js";
import { DeliveryFailure, retryAfterMs, statusOfFailure } from "../src/send.js";

const defaults = settingDefaults(WEBHOOKS_SETTINGS) as WebhooksOptions;

function problems(env: Record<string, string>): string[] {
  const read = readSettingsFromEnv(WEBHOOKS_SETTINGS, env);
  const options = { ...defaults, ...read.options };
  return [
    ...read.problems.map((p) => `${p.variable}: ${p.message}`),
    ...checkWebhooksSettings(options).map((p) => `${p.setting}: ${p.message}`),
  ];
}

describe("webhooks settings", () => {
  it("default to no receivers, a 10 s timeout, the contract's retry schedule and a week of retention", () => {
    expect(defaults).toEqual({
      urls: [],
      timeoutMs: 10_000,
      retrySchedule: ["10s", "1m", "5m", "30m", "2h", "6h"],
      retentionMs: 7 * 86_400_000,
    });
    expect(problems({})).toEqual([]);
  });

  it("refuse receivers without a secret, non-http(s) URLs, credentials, duplicates and bad durations", () => {
    const secret = "a-secret-of-sixteen+";
    expect(problems({ SERVICE_WEBHOOK_URLS: "https://hooks.example/a" })).toEqual([
      "secret: is required when SERVICE_WEBHOOK_URLS is set",
    ]);
    expect(problems({ SERVICE_WEBHOOK_URLS: "ftp://hooks.example/a", SERVICE_WEBHOOK_SECRET: secret })).toEqual([
      "SERVICE_WEBHOOK_URLS: entry 1 is not an http(s) URL",
    ]);
    expect(
      problems({ SERVICE_WEBHOOK_URLS: "https://a.example,https://u:p@b.example/x", SERVICE_WEBHOOK_SECRET: secret }),
    ).toEqual(["SERVICE_WEBHOOK_URLS: entry 2 carries credentials (receivers verify the signature instead)"]);
    expect(problems({ SERVICE_WEBHOOK_URLS: "/relative", SERVICE_WEBHOOK_SECRET: secret })).toEqual([
      "SERVICE_WEBHOOK_URLS: entry 1 is not an absolute URL",
    ]);
    expect(
      problems({ SERVICE_WEBHOOK_URLS: "https://a.example/x,https://A.example/x", SERVICE_WEBHOOK_SECRET: secret }),
    ).toEqual(["urls: lists a.example twice"]);
    expect(problems({ SERVICE_WEBHOOK_SECRET: "short" })).toEqual([
      "SERVICE_WEBHOOK_SECRET: shorter than 16 characters",
    ]);
    expect(problems({ SERVICE_WEBHOOK_RETRY_SCHEDULE: "10s,soon" })).toEqual([
      "SERVICE_WEBHOOK_RETRY_SCHEDULE: entry 2 is not a duration such as 10s, 5m or 2h",
    ]);
    expect(problems({ SERVICE_WEBHOOK_TIMEOUT_SECONDS: "0" })[0]).toMatch(/^SERVICE_WEBHOOK_TIMEOUT_SECONDS: /);
  });

  it("read durations with a unit and nothing else", () => {
    expect(["500ms", "10s", "5m", "2h", "1d", " 3s "].map(parseDuration)).toEqual([
      500, 10_000, 300_000, 7_200_000, 86_400_000, 3000,
    ]);
    expect(["", "10", "1.5s", "-1s", "10 s", "1w"].map(parseDuration)).toEqual(Array(6).fill(undefined));
  });
});

describe("retry delays", () => {
  it("follow the schedule within ±20 % jitter, and repeat its last entry", () => {
    const backoff = webhookBackoff(["10s", "1m"]);
    for (let i = 0; i < 200; i++) {
      const first = backoff(1, new Error("down"));
      expect(first).toBeGreaterThanOrEqual(8000);
      expect(first).toBeLessThanOrEqual(12_000);
      const later = backoff(5, new Error("down"));
      expect(later).toBeGreaterThanOrEqual(48_000);
      expect(later).toBeLessThanOrEqual(72_000);
    }
  });

  it("honour Retry-After (seconds or a date) to push a retry later, up to the schedule's longest delay", () => {
    const backoff = webhookBackoff(["10s", "1m"]);
    expect(backoff(1, new DeliveryFailure("HTTP 503 from x", 503, 30_000))).toBe(30_000);
    expect(backoff(1, new DeliveryFailure("HTTP 429 from x", 429, 3_600_000))).toBe(60_000);
    expect(backoff(1, new DeliveryFailure("HTTP 503 from x", 503, 0))).toBeGreaterThanOrEqual(8000);
    expect(retryAfterMs("120")).toBe(120_000);
    expect(retryAfterMs(new Date(Date.UTC(2030, 0, 1, 0, 1)).toUTCString(), Date.UTC(2030, 0, 1))).toBe(60_000);
    expect(retryAfterMs("whenever")).toBeUndefined();
    expect(retryAfterMs(undefined)).toBeUndefined();
  });

  it("keep the receiver's status in the failure's message, and read it back", () => {
    expect(statusOfFailure("HTTP 503 from hooks.example")).toBe(503);
    expect(statusOfFailure("timed out after 10000 ms at hooks.example")).toBeUndefined();
    expect(statusOfFailure(null)).toBeUndefined();
  });
});
