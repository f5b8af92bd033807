import { VellumError } from "./errors/vellum-error.js";

export interface ScheduleOptions {
  everyMs: number;
  /** A random delay from 0 to this many milliseconds added to each interval. */
  jitterMs?: number;
  /** Run once as soon as the scheduler starts instead of after the first interval. */
  runImmediately?: boolean;
}

interface ScheduledJob {
  name: string;
  options: ScheduleOptions;
  fn: () => void | Promise<void>;
  timer: NodeJS.Timeout | undefined;
  run: Promise<void> | undefined;
}

/**
 * Runs named background jobs on an interval (checkpoints, pruning, backups). The next run of a
 * job is scheduled when its previous run finishes, so runs of one job never overlap.
 */
export class Scheduler {
  readonly #onError: (error: unknown, info: { job: string }) => void;
  readonly #jobs = new Map<string, ScheduledJob>();
  #started = false;

  constructor(options: { onError: (error: unknown, info: { job: string }) => void }) {
    this.#onError = options.onError;
  }

  schedule(name: string, options: ScheduleOptions, fn: () => void | Promise<void>): void {
    if (this.#jobs.has(name)) {
      throw new VellumError("VELLUM_SCHEDULE_DUPLICATE", `scheduled job '${name}' is registered twice`, {
        data: { job: name },
      });
    }
    const job: ScheduledJob = { name, options, fn, timer: undefined, run: undefined };
    this.#jobs.set(name, job);
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

  #interval(job: ScheduledJob): number {
    return job.options.everyMs + Math.random() * (job.options.jitterMs ?? 0);
  }

  #arm(job: ScheduledJob, delayMs: number): void {
    job.timer = setTimeout(() => {
      job.timer = undefined;
      job.run = this.#execute(job);
    }, delayMs);
    job.timer.unref();
  }

  async #execute(job: ScheduledJob): Promise<void> {
    try {
      await job.fn();
    } catch (error) {
      this.#onError(error, { job: job.name });
    }
    job.run = undefined;
    if (this.#started) this.#arm(job, this.#interval(job));
  }
}
