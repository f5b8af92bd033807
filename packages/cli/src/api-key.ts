import { randomBytes } from "node:crypto";
import { mkdir, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { MIN_API_KEY_LENGTH, publishSecretFile } from "@vellum/core";
import { CliError, type ConfigProblem, EXIT_FAILURE } from "./errors.js";

export function apiKeyPath(dataDir: string): string {
  return join(dataDir, "settings", "api-key");
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === "ENOENT";
}

/** The key stored in `<dataDir>/settings/api-key`, or undefined when there is none yet. */
export async function readStoredApiKey(dataDir: string): Promise<string | undefined> {
  try {
    return (await readFile(apiKeyPath(dataDir), "utf8")).trim();
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}

export function storedApiKeyProblem(dataDir: string, key: string | undefined): ConfigProblem | undefined {
  if (key === undefined || key.length >= MIN_API_KEY_LENGTH) return undefined;
  return {
    variable: "SERVICE_API_KEY",
    message: `the key stored in ${apiKeyPath(dataDir)} is shorter than ${MIN_API_KEY_LENGTH} characters; delete the file to generate a new one, or set SERVICE_API_KEY`,
  };
}

export function generateApiKey(): string {
  return randomBytes(32).toString("base64url");
}

export interface ApiKeyResult {
  key: string;
  source: "environment" | "stored" | "generated";
}

/**
 * The bearer key to use: the configured one wins; else the stored one; else a new key is generated, written
 * with mode 0600 and announced once through `announce`.
 */
export async function ensureApiKey(options: {
  configured: string | undefined;
  dataDir: string;
  announce: (line: string) => void;
}): Promise<ApiKeyResult> {
  if (options.configured !== undefined) return { key: options.configured, source: "environment" };
  const stored = await readStoredApiKey(options.dataDir);
  if (stored !== undefined) return { key: stored, source: "stored" };
  const key = generateApiKey();
  const path = apiKeyPath(options.dataDir);
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  let published: string;
  try {
    // Published whole or not at all: a full disk or a crash leaves no empty file to be taken for a key.
    published = await publishSecretFile(path, `${key}\n`);
  } catch (error) {
    throw new CliError(EXIT_FAILURE, [`vellum: cannot store a new API key in ${path}: ${(error as Error).message}`]);
  }
  // Another process starting at the same moment may have published its key first: both use that one.
  if (published !== key) return { key: published, source: "stored" };
  options.announce(`vellum: generated an API key, stored in ${path} (shown only this once): ${key}`);
  return { key, source: "generated" };
}
