import { stat } from "node:fs/promises";
import type { PluginOfflineContext } from "@vellum/core";
import { BackupCatalog, type DrillResult } from "./catalog.js";
import { describeFailure } from "./failure.js";
import { type BackupOutcome, runBackup } from "./operations/backup.js";
import { runDrill } from "./operations/drill.js";
import type { BackupOptions } from "./options.js";
import { AdaptiveSchedule, type GenerationInfo, listGenerations } from "./policy/index.js";

/** A listing of the target is read again after this long even when the directory looks unchanged. */
const TARGET_STATE_MAX_AGE_MS = 60_000;

/** The drill's timer is jittered by up to this much either way (§4). */
const DRILL_JITTER_MS = 5 * 60_000;

export interface BackupServiceDeps {
  dataDir: string;
  databasePath: string | undefined;
  options: Readonly<BackupOptions>;
  logger: PluginOfflineContext["logger"];
  /** Changes whenever something was written to the database (this process or another). */
  writeMark(): Promise<string>;
}

/** What the target holds, as last listed (after each backup and at start). */
export interface TargetState {
  generations: number;
  newest: GenerationInfo | undefined;
  bytes: number;
}

/**
 * Backups inside the running service (backup-format.md §4): the adaptive schedule (every interval
 * while writes happen, doubling up to the idle maximum while nothing changes), retention after
 * each generation, and the restore drill on its own timer. Backups and drills never overlap: one
 * chain runs them one after the other, and the target's lock keeps other processes out.
 */
export class BackupService {
  readonly catalog: BackupCatalog;
  readonly #deps: BackupServiceDeps;
  #schedule: AdaptiveSchedule | undefined;
  #markAtLastT0: string | undefined;
  #nextDrillMono = 0;
  #chain: Promise<unknown> = Promise.resolve();
  #target: TargetState = { generations: 0, newest: undefined, bytes: 0 };
  #targetRead = Number.NEGATIVE_INFINITY;
  #targetMtimeMs = Number.NaN;

  constructor(deps: BackupServiceDeps) {
    this.#deps = deps;
    this.catalog = new BackupCatalog(deps.dataDir);
  }

  /** The target as last listed: what the metric reports between reads. */
  get target(): TargetState {
    return this.#target;
  }

  /**
   * The target now: listed again when the directory changed since the last listing (another
   * process, `vellum backup` or an operator, added or removed a file), or after a minute.
   */
  async targetState(): Promise<TargetState> {
    const target = this.#deps.options.target;
    const mtimeMs = target ? (await stat(target).catch(() => undefined))?.mtimeMs : undefined;
    const stale = performance.now() - this.#targetRead > TARGET_STATE_MAX_AGE_MS;
    if (stale || mtimeMs !== this.#targetMtimeMs) await this.#refreshTarget();
    return this.#target;
  }

  /** Lists the target and places the first generation and drill (on start). */
  async start(): Promise<void> {
    await this.#refreshTarget();
    const nowMono = performance.now();
    const newest = this.#target.newest;
    this.#schedule = new AdaptiveSchedule({
      nowMono,
      newestAgeMs: newest === undefined ? undefined : Date.now() - newest.createdMs,
      baseMs: this.#deps.options.intervalMs,
      maxMs: Math.max(this.#deps.options.idleMaxMs, this.#deps.options.intervalMs),
    });
    const lastDrill = await this.catalog.lastDrill();
    const drillAge = lastDrill === undefined ? Number.POSITIVE_INFINITY : Date.now() - Date.parse(lastDrill.at);
    this.#nextDrillMono = nowMono + Math.max(0, this.#deps.options.drillEveryMs - drillAge);
  }

  /** One look at the clocks: takes a generation and runs the drill when due. */
  async tick(): Promise<void> {
    const schedule = this.#schedule;
    if (!schedule) return;
    await this.targetState().catch(() => undefined);
    const mark = await this.#deps.writeMark();
    if (schedule.due(performance.now(), mark !== this.#markAtLastT0)) await this.backupNow().catch(() => undefined);
    if (performance.now() >= this.#nextDrillMono) await this.drillNow();
  }

  /** A generation now (after any run in progress); the schedule counts it. */
  backupNow(): Promise<BackupOutcome> {
    return this.#serial(async () => {
      const mark = await this.#deps.writeMark();
      const dirty = mark !== this.#markAtLastT0;
      const startMono = performance.now();
      try {
        const outcome = await runBackup({ ...this.#deps, now: Date.now });
        this.#markAtLastT0 = mark;
        const endMono = performance.now();
        this.#schedule?.completed({ startMono, endMono, dirty, ok: true });
        const { generation, removed } = outcome;
        const pruned = removed.length > 0 ? `; retention removed ${removed.length}` : "";
        this.#deps.logger.info(
          `backup: ${generation.name} (${generation.entries} entries, ${generation.bytes} bytes, ` +
            `${Math.round(endMono - startMono)} ms${pruned})`,
        );
        return outcome;
      } catch (error) {
        this.#schedule?.completed({ startMono, endMono: performance.now(), dirty, ok: false });
        this.#deps.logger.error(`backup failed: ${describeFailure(error).message}`);
        throw error;
      } finally {
        await this.#refreshTarget().catch(() => undefined);
      }
    });
  }

  /** The restore drill now (after any run in progress); the timer restarts from here. */
  drillNow(): Promise<DrillResult> {
    return this.#serial(async () => {
      const result = await runDrill(this.#deps);
      const jitter = (Math.random() * 2 - 1) * DRILL_JITTER_MS;
      this.#nextDrillMono = performance.now() + Math.max(this.#deps.options.drillEveryMs + jitter, 60_000);
      return result;
    });
  }

  /** Waits for the run in progress, if any (at close). */
  async idle(): Promise<void> {
    await this.#chain.catch(() => undefined);
  }

  #serial<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#chain.catch(() => undefined).then(task);
    this.#chain = run;
    return run;
  }

  async #refreshTarget(): Promise<void> {
    const target = this.#deps.options.target;
    if (!target) return;
    this.#targetMtimeMs = (await stat(target)).mtimeMs;
    const listing = await listGenerations(target);
    const bytes = [...listing.generations, ...listing.partials].reduce((sum, g) => sum + g.bytes, 0);
    this.#target = {
      generations: listing.generations.length,
      newest: listing.generations.find((g) => g.nameMatches),
      bytes,
    };
    this.#targetRead = performance.now();
  }
}
