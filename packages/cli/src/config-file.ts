import { existsSync } from "node:fs";
import { join } from "node:path";
import type { VellumConfig } from "@vellum/core";
import { createJiti } from "jiti";
import type { ConfigProblem } from "./errors.js";

/** What `vellum.config.*` may set: anything the environment can (including the listen address) plus `plugins`. */
export interface FileConfig extends Partial<VellumConfig> {
  port?: number;
  host?: string;
}

export const CONFIG_FILE_NAMES = ["vellum.config.ts", "vellum.config.mts", "vellum.config.mjs", "vellum.config.js"];

export interface LoadedConfigFile {
  /** Absolute path of the file that was loaded; undefined when there is none. */
  path?: string;
  config: FileConfig;
  problems: ConfigProblem[];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function shapeProblems(config: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const { port, host, dataDir, plugins } = config;
  if (port !== undefined && !(Number.isInteger(port) && (port as number) >= 0 && (port as number) <= 65_535)) {
    problems.push("port must be an integer from 0 to 65535");
  }
  if (host !== undefined && (typeof host !== "string" || host === "")) problems.push("host must be a non-empty string");
  if (dataDir !== undefined && (typeof dataDir !== "string" || dataDir === "")) {
    problems.push("dataDir must be a non-empty string");
  }
  if (plugins !== undefined && !Array.isArray(plugins)) problems.push("plugins must be an array");
  return problems;
}

/** Finds and loads the first `vellum.config.{ts,mts,mjs,js}` in `cwd` (TypeScript through jiti). */
export async function loadConfigFile(cwd: string): Promise<LoadedConfigFile> {
  const name = CONFIG_FILE_NAMES.find((candidate) => existsSync(join(cwd, candidate)));
  if (name === undefined) return { config: {}, problems: [] };
  const path = join(cwd, name);
  let loaded: unknown;
  try {
    const jiti = createJiti(import.meta.url);
    loaded = await jiti.import(path, { default: true });
  } catch (error) {
    const reason = error instanceof Error ? error.message.split("\n", 1)[0] : String(error);
    return { path, config: {}, problems: [{ variable: name, message: `could not be loaded: ${reason}` }] };
  }
  if (!isObject(loaded)) {
    return {
      path,
      config: {},
      problems: [
        { variable: name, message: "the default export must be an object (export default defineConfig({...}))" },
      ],
    };
  }
  const problems = shapeProblems(loaded).map((message) => ({ variable: name, message }));
  return { path, config: problems.length > 0 ? {} : (loaded as FileConfig), problems };
}
