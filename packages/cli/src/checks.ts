import { realpathSync } from "node:fs";
import { dirname, isAbsolute, relative, resolve } from "node:path";
import type { ConfigProblem } from "./errors.js";

export const MIN_API_KEY_LENGTH = 24;
export const MIN_BACKUP_PASSPHRASE_LENGTH = 16;

/** Canonical form of a path that may not exist yet: the real path of its nearest existing ancestor, plus the rest. */
function canonical(path: string): string {
  const absolute = resolve(path);
  try {
    return realpathSync.native(absolute);
  } catch {
    const parent = dirname(absolute);
    return parent === absolute ? absolute : resolve(canonical(parent), relative(parent, absolute));
  }
}

export function isInside(child: string, parent: string): boolean {
  const rel = relative(canonical(parent), canonical(child));
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

export interface CheckedSettings {
  dataDir: string;
  apiKey?: string | undefined;
  webhooks: { urls?: unknown; secret?: unknown };
  backup: { target?: unknown; passphrase?: unknown; off?: unknown };
}

function backupProblems(dataDir: string, backup: CheckedSettings["backup"]): ConfigProblem[] {
  if (typeof backup.target !== "string") return [];
  const problems: ConfigProblem[] = [];
  if (isInside(backup.target, dataDir)) {
    problems.push({
      variable: "BACKUP_TARGET",
      message: `${backup.target} is inside the data directory ${dataDir}; choose a directory outside it`,
    });
  }
  if (backup.off === true) return problems;
  if (typeof backup.passphrase !== "string") {
    problems.push({
      variable: "SERVICE_BACKUP_PASSPHRASE",
      message: "required while backup is enabled (BACKUP_TARGET is set and BACKUP_OFF is not true)",
    });
  } else if (backup.passphrase.length < MIN_BACKUP_PASSPHRASE_LENGTH) {
    problems.push({
      variable: "SERVICE_BACKUP_PASSPHRASE",
      message: `the passphrase is shorter than ${MIN_BACKUP_PASSPHRASE_LENGTH} characters`,
    });
  }
  return problems;
}

/** Rules that span several settings, checked on the merged configuration. */
export function crossChecks(settings: CheckedSettings): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const { apiKey, webhooks } = settings;
  if (apiKey !== undefined && apiKey.length < MIN_API_KEY_LENGTH) {
    problems.push({ variable: "SERVICE_API_KEY", message: `the key is shorter than ${MIN_API_KEY_LENGTH} characters` });
  }
  if (Array.isArray(webhooks.urls) && webhooks.urls.length > 0 && !webhooks.secret) {
    problems.push({ variable: "SERVICE_WEBHOOK_SECRET", message: "required when SERVICE_WEBHOOK_URLS is set" });
  }
  return [...problems, ...backupProblems(settings.dataDir, settings.backup)];
}
