import { decodeTime, monotonicFactory } from "ulidx";
import { randomUnit } from "./internal/random-pool.js";

/**
 * A ULID generator: its ids sort by their time (Unix ms, now unless given) and, within one
 * millisecond, in the order it made them. The random part comes from the kernel's pool of
 * cryptographic random bytes: ulidx's default asks the system for one byte per character, which
 * showed in a profile of creates with webhooks.
 */
export function ulidFactory(): (now?: number) => string {
  return monotonicFactory(randomUnit);
}

/** The time (Unix ms) a ULID was made for; throws on a string that is not one. */
export function ulidTime(id: string): number {
  return decodeTime(id);
}
