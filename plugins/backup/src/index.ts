/**
 * `@vellum/plugin-backup`. For now only the `.vpbk` v1 format library (backup-format.md §2); the
 * plugin itself (commands, schedule, restore procedure, drill) is not built yet.
 */
export * from "./format/index.js";
