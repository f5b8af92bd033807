import type { MigrationSet } from "@vellum/core";
import { init } from "./0001_init.js";
import { listFeed } from "./0002_list_feed.js";

/** Every migration of the articles plugin, in order. Never edit one that has shipped: add the next. */
export const articlesMigrations: MigrationSet = {
  "0001_init": init,
  "0002_list_feed": listFeed,
};
