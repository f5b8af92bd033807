// @ts-check

/** @typedef {"invalid" | "too_large" | "memory"} Reason Why the child refuses a job (`DecodeError.reason`). */

/** A job the child refuses, with its reason. */
export class Refusal extends Error {
  /**
   * @param {Reason} reason
   * @param {string} message
   */
  constructor(reason, message) {
    super(message);
    this.reason = reason;
  }
}

/** What libvips and its allocators say when an allocation fails. */
const OUT_OF_MEMORY = /out of memory|failed to allocate|memory error|error creating thread/i;

/**
 * The reason of anything a job threw: a refusal's own, `too_large` for sharp's pixel limit, `memory` for an
 * allocation that failed under the child's memory cap, `invalid` for every other decode or encode error.
 * @param {unknown} error
 * @returns {Reason}
 */
export function reasonOf(error) {
  if (error instanceof Refusal) return error.reason;
  const message = error instanceof Error ? error.message : String(error);
  if (/exceeds pixel limit/i.test(message)) return "too_large";
  return OUT_OF_MEMORY.test(message) ? "memory" : "invalid";
}
