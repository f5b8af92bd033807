export type { DecodeLogger } from "./decoder-process.js";
export { DecodeError, type DecodeFailure } from "./errors.js";
export type { DecodeJob, DecodeResult, ImageKind } from "./job.js";
export { DEFAULT_DECODE_LIMITS, type DecodeLimits } from "./limits.js";
export { DecoderPool, type DecoderPoolOptions, type DecoderPoolStats } from "./pool.js";
