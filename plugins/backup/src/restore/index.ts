/**
 * The restore procedure of backup-format.md §3.2: {@link restoreGeneration} and crash recovery
 * ({@link recoverRestores}), with the building blocks each step uses.
 */
export {
  asRestoreFailure,
  RESTORE_CODES,
  RestoreError,
  type RestoreErrorCode,
  restoreExitCode,
  type RestoreFailure,
} from "./errors.js";
export { replacedCandidate, restoreNames, type RestoreNames, utcStamp } from "./names.js";
export { checkPreconditions, DATA_DIR_LOCK, processLockName, type RestoreTarget } from "./preconditions.js";
export { checkSpace, createStaging, freeBytes, spaceHeadroom } from "./staging.js";
export { type Extracted, extractInto } from "./extract.js";
export { checkRestoredDb, type RestoredDbCheck, type RestoredFrom, writeRestoredFrom } from "./postcheck.js";
export { readJournal, type RestoreJournal } from "./journal.js";
export { chooseReplacedPath } from "./swap.js";
export { recoverRestores, type RecoverOptions, type RecoveryReport, STALE_RESTORE_MS } from "./recover.js";
export { restoreGeneration, type RestoreOptions, type RestoreResult, type RestoreStep } from "./restore.js";
