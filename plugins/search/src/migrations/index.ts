import type { MigrationSet } from "@vellum/core";
import { generationsMigration } from "./0001_generations.js";

export const searchMigrations: MigrationSet = {
  "0001_generations": generationsMigration,
};
