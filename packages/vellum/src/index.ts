import { createRequire } from "node:module";
import type { AnyVellumPlugin } from "@vellum/core";
import { admin } from "@vellum/plugin-admin";
import { articles } from "@vellum/plugin-articles";
import { backup } from "@vellum/plugin-backup";
import { cache } from "@vellum/plugin-cache";
import { health } from "@vellum/plugin-health";
import { media } from "@vellum/plugin-media";
import { openapi } from "@vellum/plugin-openapi";
import { search } from "@vellum/plugin-search";
import { webhooks } from "@vellum/plugin-webhooks";

export type { AnyVellumPlugin, VellumConfig, VellumPlugin } from "@vellum/core";
export { defineConfig, definePlugin } from "@vellum/core";

/**
 * Health expects the components of the contract's `/health/dependencies` that plugins report: one
 * that is not installed shows as `absent` there instead of being left out silently.
 */
const firstPartyPlugins: Array<() => AnyVellumPlugin> = [
  articles,
  search,
  cache,
  webhooks,
  media,
  backup,
  openapi,
  admin,
  () => health({ expect: ["search", "webhooks", "backup"] }),
];

/** The first-party plugins `vellum serve` loads, each created fresh. */
export function defaultPlugins(): AnyVellumPlugin[] {
  return firstPartyPlugins.map((create) => create());
}

/**
 * The namespaces of contract §2's variables, passed to the CLI as `settingPrefixes`: a set variable in one of
 * them that no installed plugin declares is reported with a warning.
 */
export const settingPrefixes: string[] = ["SERVICE_", "STORAGE_", "MEDIA_", "BACKUP_", "CACHE_", "ADMIN_"];

/** This package's version, reported by `vellum --version` and in `/health`. */
export const version: string = (createRequire(import.meta.url)("../package.json") as { version: string }).version;
