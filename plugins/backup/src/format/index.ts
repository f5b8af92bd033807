/**
 * The `.vpbk` v1 format (backup-format.md §2): an encrypted, chained, streaming container for one
 * backup generation. High level: {@link createVpbkWriter}, {@link openVpbk}, {@link verifyVpbk},
 * {@link readVpbkTrailer}. The building blocks (header, key schedule, frames, records, path rules)
 * are exported for the plugin and for tests that craft archives with the real key schedule.
 */
export {
  type VpbkErrorCode,
  type VpbkErrorDetails,
  type VpbkExitCode,
  VpbkError,
  VPBK_EXIT,
  vpbkExitCode,
} from "./errors.js";
export { argon2idKek, DEFAULT_KDF, KDF_LIMITS, type KdfParams, type KekDerivation, kdfLimitViolation } from "./kdf.js";
export { type VpbkKeys } from "./keys.js";
export {
  createHeader,
  deriveKekAhead,
  HEADER_BYTES,
  type NewHeaderOptions,
  parseHeader,
  type PreparedKek,
  type UnlockedWith,
  unlockHeader,
  type VpbkHeader,
  type VpbkUnlock,
  VPBK_MAGIC,
  VPBK_VERSION,
} from "./header.js";
export {
  type DataFrame,
  encodeFrameHeader,
  type FinalFrame,
  FINAL_FRAME_BYTES,
  FINAL_PLAINTEXT_BYTES,
  FRAME_DATA,
  FRAME_FINAL,
  FRAME_HEADER_BYTES,
  FRAME_OVERHEAD_BYTES,
  FRAME_PLAINTEXT_BYTES,
  FrameSealer,
  MAX_FRAMES,
  MAX_SEAL_DELAY_MS,
  openFrame,
  readFrames,
  sealFrame,
  type VpbkTrailer,
} from "./frames.js";
export {
  caseFoldKey,
  MAX_PATH_BYTES,
  MAX_SEGMENT_BYTES,
  PathOrder,
  pathViolation,
  SQLITE_DB_PATH,
  TOP_LEVEL_ALLOWLIST,
} from "./paths.js";
export {
  ContentRoot,
  encodeRecordHeader,
  MAX_END_BYTES,
  MAX_FILE_BYTES,
  MAX_MANIFEST_BYTES,
  RECORD_DIGEST_BYTES,
  RECORD_DIR,
  RECORD_END,
  RECORD_FILE,
  RECORD_HEADER_BYTES,
  RECORD_MANIFEST,
  RECORD_SQLITE_DB,
  type RecordEvent,
  type RecordHeader,
  type RecordInfo,
  RecordRules,
  type RecordSummary,
  type VpbkEnd,
  type VpbkManifest,
} from "./records.js";
export { RecordDecoder } from "./record-decoder.js";
export { type ByteSource, openSource, type VpbkSource } from "./source.js";
export {
  createVpbkWriter,
  type VpbkContent,
  type VpbkEndOptions,
  type VpbkRecordMeta,
  type VpbkWriter,
  type VpbkWriterOptions,
  type VpbkWriteSummary,
} from "./writer.js";
export {
  maxDataBytes,
  openVpbk,
  type OpenVpbkOptions,
  type VpbkArchive,
  type VpbkRecord,
  type VpbkSummary,
} from "./reader.js";
export { verifyVpbk } from "./verify.js";
export { readVpbkTrailer } from "./trailer.js";
