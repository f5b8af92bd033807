import { createHash, timingSafeEqual } from "node:crypto";

/** Keys shorter than this are refused (contract §2). */
export const MIN_API_KEY_LENGTH = 24;

const digest = (value: string) => createHash("sha256").update(value).digest();

/**
 * Returns a checker that compares a presented key with the configured one in constant time
 * (both sides are hashed first, so neither the length nor a prefix leaks through timing).
 */
export function createKeyVerifier(apiKey: string | undefined): (presented: string | undefined) => boolean {
  if (!apiKey) return () => false;
  const expected = digest(apiKey);
  return (presented) => presented !== undefined && timingSafeEqual(digest(presented), expected);
}

/** Reads the key from `Authorization: Bearer <key>`, or from `X-API-Key` where a route allows it. */
export function presentedKey(headers: Headers, allowApiKeyHeader: boolean): string | undefined {
  const auth = headers.get("authorization");
  if (auth) {
    const match = /^Bearer[ \t]+(\S+)\s*$/i.exec(auth);
    if (match) return match[1];
  }
  if (allowApiKeyHeader) return headers.get("x-api-key") ?? undefined;
  return undefined;
}
