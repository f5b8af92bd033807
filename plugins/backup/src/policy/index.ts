/**
 * The backup policies of backup-format.md §4 that sit above the format and the writer: listing
 * the generations in a directory, retention, point-in-time selection and the adaptive schedule.
 */
export {
  type GenerationInfo,
  type GenerationListing,
  listGenerations,
  nameMatchesCreated,
  type PartialFile,
  readGenerationHeader,
  type UnreadableFile,
} from "./generations.js";
export {
  applyRetention,
  DEFAULT_KEEP_COUNT,
  DEFAULT_KEEP_MS,
  planRetention,
  type RetentionOptions,
  type RetentionPlan,
} from "./retention.js";
export { parseAtTime, type PointInTime, type Rejection, selectAt, type SelectAtOptions } from "./point-in-time.js";
export {
  AdaptiveSchedule,
  DEFAULT_BASE_MS,
  DEFAULT_MAX_MS,
  type ScheduledRun,
  type ScheduleOptions,
} from "./schedule.js";
