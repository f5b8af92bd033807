/** What one decode may cost; every child of a pool shares the same limits. */
export interface DecodeLimits {
  /** Most pixels of one frame (width × height), checked from the header before decoding. Default 50,000,000. */
  maxFramePixels: number;
  /** Most pixels of all frames of an animation together, checked before decoding. Default 500,000,000. */
  maxTotalPixels: number;
  /**
   * Megabytes of memory each child may use: its data segment limit (`RLIMIT_DATA`, which counts the V8 heap,
   * malloc and the pixel buffers of libvips alike) and its V8 old space. Node and sharp take about 100 MB of
   * it before any image; a 50-megapixel RGBA frame needs about 1,100 MB more to re-encode. Default 1536.
   */
  memoryMb: number;
  /** Milliseconds one job may take once a child has it; over that the child is killed and replaced. Default 30,000. */
  timeoutMs: number;
}

export const DEFAULT_DECODE_LIMITS: Readonly<DecodeLimits> = {
  maxFramePixels: 50_000_000,
  maxTotalPixels: 500_000_000,
  memoryMb: 1536,
  timeoutMs: 30_000,
};

/** Below this a child cannot load Node and sharp at all. */
const MIN_MEMORY_MB = 128;

/** `limits` over the defaults, each a positive integer (and `memoryMb` at least 128), or a RangeError. */
export function resolveLimits(limits: Partial<DecodeLimits> = {}): DecodeLimits {
  const resolved = { ...DEFAULT_DECODE_LIMITS, ...limits };
  for (const [name, value] of Object.entries(resolved)) {
    if (!Number.isSafeInteger(value) || value < 1)
      throw new RangeError(`decode limit ${name} must be a positive integer`);
  }
  if (resolved.memoryMb < MIN_MEMORY_MB)
    throw new RangeError(`decode limit memoryMb must be at least ${MIN_MEMORY_MB}`);
  return resolved;
}
