/**
 * The live snapshot of backup-format.md §3.1: the SQLite image taken in a worker, and the walk of
 * the data dir's files into a generation.
 */
export { BackupError, type BackupErrorCode } from "./errors.js";
export {
  type DbSnapshot,
  defaultSnapshotCap,
  MAX_SNAPSHOT_BYTES,
  snapshotDatabase,
  type SnapshotOptions,
} from "./sqlite.js";
export {
  type FileCopyHooks,
  type FilesWritten,
  type SkippedEntry,
  SMALL_FILE_BYTES,
  STABLE_READ_TRIES,
  type WalkEntry,
  WALKED_FOLDERS,
  walkDataDir,
  writeDataFiles,
} from "./files.js";
