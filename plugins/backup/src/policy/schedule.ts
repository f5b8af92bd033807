import { BackupError } from "../snapshot/errors.js";

/**
 * The adaptive schedule of backup-format.md §4, as pure arithmetic on monotonic milliseconds (the
 * caller reads `performance.now()` or `process.hrtime`; only labels use the wall clock, so an NTP
 * step moves nothing here).
 */

/** The interval while writes happen, and the first step of the idle backoff: 5 min. */
export const DEFAULT_BASE_MS = 5 * 60 * 1000;
/** The longest interval while idle: 6 h. */
export const DEFAULT_MAX_MS = 6 * 60 * 60 * 1000;

/** How an {@link AdaptiveSchedule} starts. */
export interface ScheduleOptions {
  /** The monotonic clock when the scheduler starts, ms. */
  nowMono: number;
  /**
   * How old the newest existing generation is by the wall clock (now − created_ms), ms; undefined
   * when there is none. Decides whether the first generation is due at once.
   */
  newestAgeMs: number | undefined;
  /** Default 5 min. */
  baseMs?: number | undefined;
  /** Default 6 h; at least `baseMs`. */
  maxMs?: number | undefined;
}

/** One finished run, as the single-flight runner saw it. */
export interface ScheduledRun {
  /** Monotonic ms when the run started (just before T0). */
  startMono: number;
  /** Monotonic ms when it ended (published and checked, or failed). */
  endMono: number;
  /** Whether there were writes since the previous generation's T0 when this one started. */
  dirty: boolean;
  /** Whether a generation was published and passed read-after-write; default true. */
  ok?: boolean | undefined;
}

/**
 * When the next generation is due. `k` counts the consecutive generations taken while clean.
 * - **Dirty** (writes since the last T0): due at `max(lastStart + base, lastEnd)`, so at most one
 *   generation per `base` and never before the previous one ended; a dirty generation resets k to 0.
 * - **Clean**: due at `lastStart + min(base · 2^k, max)`; each clean generation increments k, so
 *   the intervals go 5, 10, 20, 40, 80, 160, 320 min, then 6 h.
 * - A failed run moves `lastStart`/`lastEnd` but not k: the next attempt comes after the same
 *   interval. The caller keeps its "dirty" state until a generation is published.
 * - **At start**, before any run: the first generation is due at once, dirty or clean, if there
 *   is no generation yet or the newest is at least `base` old (writes before a restart are not
 *   known, and an idle restart must not leave the freshness check to fail). Otherwise the newest
 *   counts as the last run, started `newestAgeMs` ago: the first is due `base` after its start.
 *   k starts at 0.
 */
export class AdaptiveSchedule {
  readonly baseMs: number;
  readonly maxMs: number;
  #k = 0;
  #lastStart: number;
  #lastEnd: number;

  constructor(options: ScheduleOptions) {
    this.baseMs = options.baseMs ?? DEFAULT_BASE_MS;
    this.maxMs = options.maxMs ?? DEFAULT_MAX_MS;
    if (
      !(this.baseMs > 0) ||
      !Number.isFinite(this.baseMs) ||
      !(this.maxMs >= this.baseMs) ||
      !Number.isFinite(this.maxMs)
    ) {
      throw new BackupError("E_USAGE", `backup intervals need 0 < base ≤ max, not ${this.baseMs} and ${this.maxMs}`);
    }
    const age =
      options.newestAgeMs === undefined ? this.baseMs : Math.min(Math.max(options.newestAgeMs, 0), this.baseMs);
    this.#lastStart = options.nowMono - age;
    this.#lastEnd = this.#lastStart;
  }

  /** Consecutive generations taken while clean. */
  get k(): number {
    return this.#k;
  }

  /** The interval after a start while clean: `min(base · 2^k, max)`. */
  get cleanIntervalMs(): number {
    return Math.min(this.baseMs * 2 ** this.#k, this.maxMs);
  }

  /** The monotonic ms at which the next generation is due, given whether there were writes since the last T0. */
  nextAt(dirty: boolean): number {
    return dirty ? Math.max(this.#lastStart + this.baseMs, this.#lastEnd) : this.#lastStart + this.cleanIntervalMs;
  }

  /** Whether a generation is due at `nowMono`. */
  due(nowMono: number, dirty: boolean): boolean {
    return nowMono >= this.nextAt(dirty);
  }

  /** Records a finished run (runs never overlap): a published dirty generation resets k, a clean one increments it. */
  completed(run: ScheduledRun): void {
    if (!(run.endMono >= run.startMono)) {
      throw new BackupError("E_USAGE", `a run cannot end (${run.endMono}) before it starts (${run.startMono})`);
    }
    this.#lastStart = run.startMono;
    this.#lastEnd = run.endMono;
    if (run.ok === false) return;
    this.#k = run.dirty ? 0 : this.#k + 1;
  }
}
