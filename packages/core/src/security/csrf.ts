import { createHmac, timingSafeEqual } from "node:crypto";
import { randomToken } from "../internal/random-pool.js";

export const CSRF_COOKIE = "svc_csrf";
export const CSRF_HEADER = "x-csrf-token";

export interface CsrfTokens {
  /** A fresh token: random part plus an HMAC of it under the server secret. */
  issue(): string;
  /** True when the token is well formed and its HMAC verifies. */
  verify(token: string | undefined): boolean;
}

/** Signed double-submit tokens (contract §4): `<random>.<hmac(random)>`, both base64url. */
export function createCsrfTokens(secret: string): CsrfTokens {
  const sign = (nonce: string) => createHmac("sha256", secret).update(nonce).digest("base64url");
  return {
    issue() {
      const nonce = randomToken(24);
      return `${nonce}.${sign(nonce)}`;
    },
    verify(token) {
      if (!token || token.length > 200) return false;
      const dot = token.indexOf(".");
      if (dot <= 0) return false;
      const expected = Buffer.from(sign(token.slice(0, dot)));
      const given = Buffer.from(token.slice(dot + 1));
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}

/** Header and cookie must both be present, equal, and the cookie must carry a valid signature. */
export function csrfMatches(tokens: CsrfTokens, cookie: string | undefined, header: string | null): boolean {
  if (!cookie || !header) return false;
  const a = Buffer.from(cookie);
  const b = Buffer.from(header);
  return a.length === b.length && timingSafeEqual(a, b) && tokens.verify(cookie);
}
