/**
 * `@vellum/plugin-backup`: the plugin ({@link backup}) and the libraries it is made of: the `.vpbk`
 * v1 format (backup-format.md §2), the live snapshot and the writing of a generation (§3.1, §2.6),
 * the restore procedure with its crash recovery (§3.2), and the policies of §4 (listing,
 * retention, point in time, the adaptive schedule).
 */
export { backup } from "./plugin.js";
export type { BackupOptions } from "./options.js";
export * from "./format/index.js";
export * from "./generation/index.js";
export * from "./policy/index.js";
export * from "./restore/index.js";
export * from "./snapshot/index.js";
