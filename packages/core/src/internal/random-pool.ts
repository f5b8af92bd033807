import { randomFillSync } from "node:crypto";

const POOL_SIZE = 4096;
const pool = Buffer.allocUnsafe(POOL_SIZE);
let offset = POOL_SIZE;

function take(bytes: number): number {
  if (offset + bytes > POOL_SIZE) {
    randomFillSync(pool);
    offset = 0;
  }
  const at = offset;
  offset += bytes;
  return at;
}

/**
 * Cryptographically random bytes as base64url, drawn from a pool refilled 4 KiB at a time instead
 * of one `randomFillSync` per request, which showed up in CPU profiles.
 */
export function randomToken(bytes: number): string {
  const at = take(bytes);
  return pool.toString("base64url", at, at + bytes);
}

/**
 * A random number in [0, 1) in steps of 1/256, from the same pool: the PRNG of job ids (ulidx's
 * default asks `crypto.getRandomValues` once per character).
 */
export function randomUnit(): number {
  return (pool[take(1)] as number) / 256;
}
