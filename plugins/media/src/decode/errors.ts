/**
 * Why a decode failed:
 * - `invalid`: not an image of the announced kind, corrupt or truncated, an SVG the policy refuses, or a job
 *   whose paths are not inside the work dir;
 * - `too_large`: a frame over `maxFramePixels`, or all frames together over `maxTotalPixels`;
 * - `timeout`: over `timeoutMs`, the child was killed;
 * - `memory`: the child ran out of its memory cap (it is replaced);
 * - `crashed`: the child died mid-job (a native crash, or out of memory without saying so);
 * - `closed`: the pool was closed before the job finished.
 */
export type DecodeFailure = "invalid" | "too_large" | "timeout" | "memory" | "crashed" | "closed";

/** A decode that did not produce its output; `reason` says why, the message says it for logs. */
export class DecodeError extends Error {
  readonly reason: DecodeFailure;

  constructor(reason: DecodeFailure, message: string) {
    super(message);
    this.name = "DecodeError";
    this.reason = reason;
  }
}
