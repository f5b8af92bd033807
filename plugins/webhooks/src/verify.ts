import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * The receiver's side of a Vellum webhook (`@vellum/plugin-webhooks/verify`). It loads nothing
 * but `node:crypto`, so a receiver can use it without the kernel.
 *
 * A delivery carries `X-Service-Timestamp` (unix seconds) and `X-Service-Signature:
 * sha256=<lower-case hex HMAC-SHA256(secret, "<timestamp>.<raw body>")>`.
 */

/** Headers as `node:http` (`req.headers`), Express or the fetch API (`Headers`) give them. */
export type WebhookHeaders = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

export interface VerifyOptions {
  /** Most seconds between the delivery's timestamp and now, either way. Default 300 (5 minutes). */
  toleranceSeconds?: number;
  /** Now, for tests. Default `Date.now()`. */
  now?: number;
}

export type VerifyFailure =
  /** A signature or timestamp header is missing or malformed. */
  | "malformed"
  /** The timestamp is further from now than the tolerance: a replay, or a clock far off. */
  | "stale"
  /** The signature does not match the body and timestamp under this secret. */
  | "mismatch";

export type VerifyResult = { ok: true; timestamp: number } | { ok: false; reason: VerifyFailure };

const SIGNATURE = /^sha256=([0-9a-f]{64})$/;
const TIMESTAMP = /^\d{1,12}$/;

/** The `X-Service-Signature` value of `body` sent at `timestamp` (unix seconds). */
export function signWebhook(secret: string, timestamp: number | string, body: string | Uint8Array): string {
  const hmac = createHmac("sha256", secret).update(`${timestamp}.`);
  hmac.update(body);
  return `sha256=${hmac.digest("hex")}`;
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
  const value = (headers as Record<string, string | readonly string[] | undefined>)[name];
  return typeof value === "string" ? value : undefined;
}

/**
 * Checks a delivery: `rawBody` exactly as received (before any JSON parsing), its headers and the
 * shared secret. The comparison takes the same time whatever the signature, and a timestamp
 * outside the tolerance is refused even when the signature is right, so a captured delivery
 * cannot be replayed later.
 */
export function verifyWebhook(
  rawBody: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string,
  options: VerifyOptions = {},
): VerifyResult {
  const timestampText = header(headers, "x-service-timestamp")?.trim();
  const signature = SIGNATURE.exec(header(headers, "x-service-signature")?.trim() ?? "");
  if (!timestampText || !TIMESTAMP.test(timestampText) || !signature) return { ok: false, reason: "malformed" };
  const timestamp = Number(timestampText);
  const now = (options.now ?? Date.now()) / 1000;
  if (Math.abs(now - timestamp) > (options.toleranceSeconds ?? 300)) return { ok: false, reason: "stale" };
  const expected = Buffer.from(signWebhook(secret, timestampText, rawBody).slice("sha256=".length), "hex");
  const given = Buffer.from(signature[1] as string, "hex");
  return timingSafeEqual(expected, given) ? { ok: true, timestamp } : { ok: false, reason: "mismatch" };
}
