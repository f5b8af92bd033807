import { createHmac, createSecretKey, timingSafeEqual } from "node:crypto";
import { randomToken } from "../internal/random-pool.js";

export const CSRF_COOKIE = "svc_csrf";
export const CSRF_HEADER = "x-csrf-token";

export interface CsrfTokens {
  /** A fresh token: random part plus an HMAC of it under the server secret. */
  issue(): string;
  /** True when the token is well formed and its HMAC verifies. */
  verify(token: string | undefined): boolean;
}

/** How long a freshly issued token is handed to other cookie-less clients too. */
const REUSE_MS = 1000;
/** Tokens remembered as verified (clients send the same cookie on every request). */
const VERIFIED_MAX = 1024;

/**
 * Signed double-submit tokens (contract §4): `<random>.<hmac(random)>`, both base64url.
 *
 * A token is not bound to a client (there is no session to bind it to), so anyone can obtain a
 * valid one with a GET; what the signature guarantees is that only this server mints them. Handing
 * the same fresh token to every cookie-less client within one second therefore changes nothing
 * for security, and saves an HMAC per request for API clients that never keep cookies.
 */
export function createCsrfTokens(secret: string): CsrfTokens {
  const key = createSecretKey(Buffer.from(secret));
  const sign = (nonce: string) => createHmac("sha256", key).update(nonce).digest("base64url");
  let recent = { token: "", until: 0 };
  // Only tokens whose signature checked out are kept, so a hit needs the whole valid token.
  const verified = new Set<string>();
  return {
    issue() {
      const now = Date.now();
      if (now < recent.until) return recent.token;
      const nonce = randomToken(24);
      recent = { token: `${nonce}.${sign(nonce)}`, until: now + REUSE_MS };
      return recent.token;
    },
    verify(token) {
      if (!token || token.length > 200) return false;
      if (verified.has(token)) return true;
      const dot = token.indexOf(".");
      if (dot <= 0) return false;
      const expected = Buffer.from(sign(token.slice(0, dot)));
      const given = Buffer.from(token.slice(dot + 1));
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return false;
      verified.add(token);
      if (verified.size > VERIFIED_MAX) verified.delete(verified.values().next().value as string);
      return true;
    },
  };
}

/** Header and cookie must both be present, equal, and the cookie must carry a valid signature. */
export function csrfMatches(
  tokens: CsrfTokens | undefined,
  cookie: string | undefined,
  header: string | null,
): boolean {
  if (!tokens || !cookie || !header) return false;
  const a = Buffer.from(cookie);
  const b = Buffer.from(header);
  return a.length === b.length && timingSafeEqual(a, b) && tokens.verify(cookie);
}
