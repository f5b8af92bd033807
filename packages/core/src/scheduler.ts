import { VellumError } from "./errors/vellum-error.js";
import type { Leases } from "./leases/leases.js";

export interface ScheduleOptions {
  everyMs: number;
  /** A random delay from 0 to this many milliseconds added to each interval. */
  jitterMs?: number;
  /**
   * Run once as soon as the scheduler starts instead of after the first interval, and again when
   * this process takes the task's lease over from another: a daily task in processes restarted in
   * turn more often than daily would otherwise never run.
   */
  runImmediately?: boolean;
  /**
   * Run in every process that shares the database, for work on the process's own state (a rescan
   * of what it counts). Default: only in the process holding the task's lease (`Leases`), so a
   * backup or a prune runs once however many processes share the database.
   */
  everyProcess?: boolean;
}

interface ScheduledJob {
  name: string;
  options: ScheduleOptions;
  fn: () => void | Promise<void>;
  timer: NodeJS.Timeout | undefined;
  run: Promise<void> | undefined;
}

const leaseName = (job: string) => `schedule:${job}`;

/**
 * Runs named background jobs on an interval (checkpoints, pruning, backups). The next run of a
 * job is scheduled when its previous run finishes, so runs of one job never overlap.
 * With several processes on one database, a job runs in the one that holds its lease.
 */
export class Scheduler {
  readonly #onError: (error: unknown, info: { job: string }) => void;
  readonly #leases: Leases | undefined;
  readonly #jobs = new Map<string, ScheduledJob>();
  #started = false;

  constructor(options: { onError: (error: unknown, info: { job: string }) => void; leases?: Leases }) {
    this.#onError = options.onError;
    this.#leases = options.leases;
  }

  schedule(name: string, options: ScheduleOptions, fn: () => void | Promise<void>): void {
    if (this.#jobs.has(name)) {
      throw new VellumError("VELLUM_SCHEDULE_DUPLICATE", `scheduled job '${name}' is registered twice`, {
        data: { job: name },
      });
    }
    const job: ScheduledJob = { name, options, fn, timer: undefined, run: undefined };
    this.#jobs.set(name, job);
    if (!options.everyProcess) this.#leases?.watch(leaseName(name), { acquired: () => this.#acquired(job), lost() {} });
    if (this.#started) this.#arm(job, job.options.runImmediately ? 0 : this.#interval(job));
  }

  start(): void {
    if (this.#started) return;
    this.#started = true;
    for (const job of this.#jobs.values()) this.#arm(job, job.options.runImmediately ? 0 : this.#interval(job));
  }

  /** Clears the timers and waits for the runs in progress. */
  async stop(): Promise<void> {
    this.#started = false;
    for (const job of this.#jobs.values()) {
      clearTimeout(job.timer);
      job.timer = undefined;
    }
    await Promise.all([...this.#jobs.values()].map((job) => job.run));
  }

  running(): string[] {
    return [...this.#jobs.values()].filter((job) => job.run !== undefined).map((job) => job.name);
  }

  /** This process took the task's lease: a `runImmediately` task runs now unless it is running. */
  #acquired(job: ScheduledJob): void {
    if (!this.#started || !job.options.runImmediately || job.run || job.timer === undefined) return;
    clearTimeout(job.timer);
    this.#arm(job, 0);
  }

  #interval(job: ScheduledJob): number {
    return job.options.everyMs + Math.random() * (job.options.jitterMs ?? 0);
  }

  #arm(job: ScheduledJob, delayMs: number): void {
    job.timer = setTimeout(() => {
      job.timer = undefined;
      // Cleared in a later turn, also when the run skipped at once (the lease is elsewhere).
      job.run = this.#execute(job).finally(() => {
        job.run = undefined;
        if (this.#started) this.#arm(job, this.#interval(job));
      });
    }, delayMs);
    job.timer.unref();
  }

  async #execute(job: ScheduledJob): Promise<void> {
    try {
      if (job.options.everyProcess || (this.#leases?.holds(leaseName(job.name)) ?? true)) await job.fn();
    } catch (error) {
      this.#onError(error, { job: job.name });
    }
  }
}
