/**
 * `@vellum/plugin-backup`. For now the libraries the plugin will be made of: the `.vpbk` v1 format
 * (backup-format.md §2), the live snapshot and the writing of a generation (§3.1, §2.6), and the
 * restore procedure with its crash recovery (§3.2). The plugin itself (its settings, commands,
 * schedule, retention, point in time, drill and health component) is not built yet.
 */
export * from "./format/index.js";
export * from "./generation/index.js";
export * from "./restore/index.js";
export * from "./snapshot/index.js";
