import type { StorageOptions } from "../options.js";
import { roundRatio, type StorageSnapshot, type StorageUsage } from "../storage-usage.js";
import type { ComponentState } from "./state.js";

/** `ok`; `warning` (quota or data disk at the seed's 80 % warning level); `full` (above 90 %); `unavailable`. */
export type StorageStatus = "ok" | "warning" | "full" | "unavailable";

export interface StorageCheck {
  status: StorageStatus;
  /** The component state used by `/health` and readiness. */
  state: ComponentState;
  warning: boolean;
  snapshot: StorageSnapshot;
}

/** Below this much free space on the data disk no write is safe (one commit can need more): the disk is full. */
const DISK_FULL_FREE_BYTES = 1024 * 1024;

/**
 * Judges a storage snapshot. Above `fullRatio` of the quota, or with under 1 MiB free on the data
 * disk (where writes answer 503 `service_unavailable`), storage is `full`: `/health/storage`
 * answers 503 and `/health` is degraded, but the instance stays ready (it still serves reads, and
 * uploads are capped by the remaining quota). Only a data dir that cannot be written or examined
 * makes storage `unavailable` and the instance not ready.
 */
export function judgeStorage(snapshot: StorageSnapshot, options: StorageOptions): StorageCheck {
  const diskWarning = snapshot.disk !== null && snapshot.disk.used_ratio > options.diskWarnRatio;
  const diskFull = snapshot.disk !== null && snapshot.disk.available_bytes < DISK_FULL_FREE_BYTES;
  const warning = snapshot.used_ratio >= options.warnRatio || diskWarning;
  if (!snapshot.writable || snapshot.disk === null)
    return { status: "unavailable", state: "unavailable", warning, snapshot };
  if (snapshot.used_ratio > options.fullRatio || diskFull)
    return { status: "full", state: "degraded", warning, snapshot };
  return { status: warning ? "warning" : "ok", state: "ok", warning, snapshot };
}

export async function checkStorage(usage: StorageUsage, options: StorageOptions): Promise<StorageCheck> {
  return judgeStorage(await usage.snapshot(), options);
}

/** The `/health/storage` body. */
export function storageBody(check: StorageCheck) {
  const { snapshot: s } = check;
  return {
    status: check.status,
    used_bytes: s.used_bytes,
    quota_bytes: s.quota_bytes,
    used_ratio: roundRatio(s.used_ratio),
    warning: check.warning,
    files_bytes: s.files_bytes,
    accounted: s.accounted,
    database_bytes: s.database_bytes,
    scanned_at: s.scanned_at,
    writable: s.writable,
    disk: s.disk && { ...s.disk, used_ratio: roundRatio(s.disk.used_ratio) },
  };
}
