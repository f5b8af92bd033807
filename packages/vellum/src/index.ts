import { createRequire } from "node:module";
import type { VellumPlugin } from "@vellum/core";

export type { VellumConfig, VellumPlugin } from "@vellum/core";
export { defineConfig, definePlugin } from "@vellum/core";

const firstPartyPlugins: Array<() => VellumPlugin> = [];

/** The first-party plugins `vellum serve` loads, each created fresh. */
export function defaultPlugins(): VellumPlugin[] {
  return firstPartyPlugins.map((create) => create());
}

/** This package's version, reported by `vellum --version` and in `/health`. */
export const version: string = (createRequire(import.meta.url)("../package.json") as { version: string }).version;
