/** Writing one backup generation (backup-format.md §2.6, §4): lock, naming, publish, verify. */
export { type GenerationResult, writeGeneration, type WriteGenerationOptions } from "./generation.js";
export { acquireLock, type HeldLock, LOCK_NAME, LOCK_STALE_MS, type LockInfo, withMutex } from "./lock.js";
export { generationName, isPartialName, nameSecond } from "./naming.js";
export { PARTIAL_MAX_AGE_MS } from "./publish.js";
