import { CoreErrors } from "../errors/vellum-error.js";
import type { LifecycleCallback } from "../plugin/context.js";

export type Phase = "start" | "ready" | "preClose" | "close";

/** Lifecycle callbacks per plugin, run in plugin order (start, ready) or reverse order (preClose, close). */
export class LifecycleCallbacks {
  readonly #entries: Array<{ plugin: string; phase: Phase; fn: LifecycleCallback }> = [];

  add(plugin: string, phase: Phase, fn: LifecycleCallback): void {
    this.#entries.push({ plugin, phase, fn });
  }

  /** Runs the phase; a throw, named after its plugin, stops it, or goes to `onError` and the rest still run. */
  async run(phase: Phase, order: readonly string[], onError?: (error: Error) => void): Promise<void> {
    const rank = new Map(order.map((name, i) => [name, i]));
    const reverse = phase === "preClose" || phase === "close";
    const entries = this.#entries
      .filter((e) => e.phase === phase)
      .sort((a, b) => ((rank.get(a.plugin) ?? -1) - (rank.get(b.plugin) ?? -1)) * (reverse ? -1 : 1));
    for (const entry of entries) {
      try {
        await entry.fn();
      } catch (cause) {
        const reason = cause instanceof Error ? cause.message : String(cause);
        const error = CoreErrors.pluginHookFailed([entry.plugin, phase, reason], { plugin: entry.plugin, cause });
        if (!onError) throw error;
        onError(error);
      }
    }
  }
}

/** Rejects when `promise` takes longer than `ms`. */
export function withTimeout<T>(promise: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Runs `fn` on the first call; every call returns the first call's promise. */
export function once<T>(fn: () => Promise<T>): () => Promise<T> {
  let promise: Promise<T> | undefined;
  return () => (promise ??= fn());
}
