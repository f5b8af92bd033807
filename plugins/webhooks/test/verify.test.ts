import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { signWebhook, verifyWebhook } from "../src/verify.js";

const SECRET = "receiver-secret-0123456789";
const BODY = '{"id":"01J0000000000000000000000","type":"article.created"}';
const NOW = 1_800_000_000_000;
const TS = String(NOW / 1000);

function headers(overrides: Record<string, string | undefined> = {}) {
  return { "x-service-timestamp": TS, "x-service-signature": signWebhook(SECRET, TS, BODY), ...overrides };
}

describe("verifyWebhook", () => {
  it("accepts a delivery signed over '<timestamp>.<raw body>', from node headers, Headers or bytes", () => {
    expect(verifyWebhook(BODY, headers(), SECRET, { now: NOW })).toEqual({ ok: true, timestamp: NOW / 1000 });
    expect(verifyWebhook(new TextEncoder().encode(BODY), new Headers(headers()), SECRET, { now: NOW })).toMatchObject({
      ok: true,
    });
    const [, hex] = signWebhook(SECRET, TS, BODY).split("=");
    expect(hex).toBe(createHmac("sha256", SECRET).update(`${TS}.${BODY}`).digest("hex"));
  });

  it("refuses any one-byte change of the body, a wrong secret and a moved timestamp", () => {
    for (let i = 0; i < BODY.length; i += 7) {
      const changed = BODY.slice(0, i) + String.fromCharCode(BODY.charCodeAt(i) ^ 1) + BODY.slice(i + 1);
      expect(verifyWebhook(changed, headers(), SECRET, { now: NOW })).toEqual({ ok: false, reason: "mismatch" });
    }
    expect(verifyWebhook(BODY, headers(), `${SECRET}x`, { now: NOW })).toEqual({ ok: false, reason: "mismatch" });
    const moved = headers({ "x-service-timestamp": String(NOW / 1000 + 1) });
    expect(verifyWebhook(BODY, moved, SECRET, { now: NOW })).toEqual({ ok: false, reason: "mismatch" });
  });

  it("refuses a timestamp outside the tolerance either way, even correctly signed", () => {
    for (const offset of [-301, 301]) {
      const ts = String(NOW / 1000 + offset);
      const h = { "x-service-timestamp": ts, "x-service-signature": signWebhook(SECRET, ts, BODY) };
      expect(verifyWebhook(BODY, h, SECRET, { now: NOW })).toEqual({ ok: false, reason: "stale" });
      expect(verifyWebhook(BODY, h, SECRET, { now: NOW, toleranceSeconds: 400 })).toMatchObject({ ok: true });
    }
  });

  it("refuses missing or malformed headers without throwing", () => {
    const signature = signWebhook(SECRET, TS, BODY);
    for (const h of [
      {},
      headers({ "x-service-signature": undefined }),
      headers({ "x-service-timestamp": undefined }),
      headers({ "x-service-signature": signature.toUpperCase() }),
      headers({ "x-service-signature": signature.slice(0, -2) }),
      headers({ "x-service-signature": `sha1=${signature.slice(7)}` }),
      headers({ "x-service-timestamp": "soon" }),
      headers({ "x-service-timestamp": "-1" }),
    ]) {
      expect(verifyWebhook(BODY, h, SECRET, { now: NOW })).toEqual({ ok: false, reason: "malformed" });
    }
    expect(
      verifyWebhook(BODY, { "x-service-timestamp": [TS, TS] as const, "x-service-signature": signature }, SECRET, {
        now: NOW,
      }),
    ).toEqual({
      ok: false,
      reason: "malformed",
    });
  });
});
