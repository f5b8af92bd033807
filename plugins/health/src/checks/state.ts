/**
 * Component states as `/health` reports them. `ok`, `degraded` and `unavailable` are the seed's;
 * `absent` means the operator expects a component (option `expect`) that no installed plugin
 * registers — it is shown, and never counted as a fault.
 */
export type ComponentState = "ok" | "degraded" | "unavailable" | "absent";

const SEVERITY: Record<ComponentState, number> = { absent: 0, ok: 1, degraded: 2, unavailable: 3 };

/** The more severe of two states. */
export function worst(a: ComponentState, b: ComponentState): ComponentState {
  return SEVERITY[a] >= SEVERITY[b] ? a : b;
}

/** True for `degraded` and `unavailable`: the states that make `/health` degraded. */
export function isFault(state: ComponentState): boolean {
  return state === "degraded" || state === "unavailable";
}

export class DeadlineError extends Error {
  override readonly name = "DeadlineError";
}

/** Settles like `work`, or rejects with a `DeadlineError` once `ms` have passed. */
export function withDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineError(`${what} did not answer within ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

type Logger = { warn(message: string, ...args: unknown[]): void; info(message: string, ...args: unknown[]): void };

/**
 * Logs a check when it starts failing and when it recovers, not on every probe (a load balancer
 * asks every few seconds). The client only ever sees a coarse reason; the cause is logged here.
 */
export class FailureLog {
  readonly #logger: Logger;
  readonly #failing = new Set<string>();

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  failed(check: string, error: unknown): void {
    if (this.#failing.has(check)) return;
    this.#failing.add(check);
    if (typeof error === "string") this.#logger.warn(`${check} check is failing: ${error}`);
    else this.#logger.warn(`${check} check is failing`, error);
  }

  passed(check: string): void {
    if (this.#failing.delete(check)) this.#logger.info(`${check} check recovered`);
  }
}
