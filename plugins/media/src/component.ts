import type { HealthComponent, StorageQuotaService } from "@vellum/core";
import type { DecoderPool } from "./decode/index.js";
import type { MediaLibrary } from "./library.js";

/**
 * `/health/media`: the items and bytes the media folder holds (the accounting in `media_items`),
 * the quota and how much of it the data dir uses, and the decoder pool. Degraded above 90 % of
 * the quota, as `/health/storage` is full there: uploads are about to be refused (507).
 */
export function mediaComponent(deps: {
  library: MediaLibrary;
  decoders: Pick<DecoderPool, "stats">;
  quota(): StorageQuotaService | undefined;
}): HealthComponent {
  return {
    name: "media",
    async check() {
      const totals = await deps.library.totals();
      const quota = deps.quota();
      const used = quota?.usedBytes();
      const ratio = quota && used !== undefined ? used / quota.quotaBytes : null;
      return {
        state: ratio !== null && ratio > 0.9 ? "degraded" : "ok",
        detail: {
          ...totals,
          quota_bytes: quota?.quotaBytes ?? null,
          quota_used_ratio: ratio === null ? null : Math.round(ratio * 1_000_000) / 1_000_000,
          decoders: deps.decoders.stats(),
        },
      };
    },
  };
}
