import type { MigrationSet } from "@vellum/core";
import { generationsMigration } from "./0001_generations.js";
import { pendingFtsMigration } from "./0002_pending_fts.js";

export const searchMigrations: MigrationSet = {
  "0001_generations": generationsMigration,
  "0002_pending_fts": pendingFtsMigration,
};
