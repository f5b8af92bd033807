import { statSync } from "node:fs";
import { rm } from "node:fs/promises";
import { resolve } from "node:path";
import { type DecodeLogger, DecoderProcess } from "./decoder-process.js";
import { DecodeError } from "./errors.js";
import { checkJob, type DecodeJob, type DecodeResult } from "./job.js";
import { type ChildCommand, decoderCommand } from "./launch.js";
import { type DecodeLimits, resolveLimits } from "./limits.js";

export interface DecoderPoolOptions {
  /** Children decoding at once; more jobs wait in a queue. Default 2. */
  size?: number;
  /** The only folder children read images from and write webp to; it must exist. */
  workDir: string;
  /** Over `DEFAULT_DECODE_LIMITS`. */
  limits?: Partial<DecodeLimits>;
  /** Receives what children write to stderr and the deaths of children. */
  logger?: DecodeLogger;
}

/** For a health component or metrics. */
export interface DecoderPoolStats {
  size: number;
  /** Children running a job now. */
  busy: number;
  /** Jobs waiting for a child. */
  queued: number;
  /** Children lost so far (killed for time or memory, or crashed), each replaced at its slot's next job. */
  restarts: number;
}

interface Queued {
  job: DecodeJob;
  resolve(result: DecodeResult): void;
  reject(error: unknown): void;
}

interface Slot {
  process: DecoderProcess | undefined;
  busy: boolean;
}

/**
 * Decodes images and re-encodes them to webp with sharp in a few child processes, so that a native
 * crash, a decompression bomb or a hung decoder costs a child, never the server. Children are started at
 * a slot's first job and reused across jobs; one that dies is replaced at its slot's next job. Jobs beyond
 * the pool's size wait in order. `close()` must be called: live children keep the process running.
 */
export class DecoderPool {
  readonly #workDir: string;
  readonly #limits: DecodeLimits;
  readonly #command: ChildCommand;
  readonly #logger: DecodeLogger | undefined;
  readonly #slots: Slot[];
  readonly #queue: Queued[] = [];
  #restarts = 0;
  #closed = false;

  constructor(options: DecoderPoolOptions) {
    const size = options.size ?? 2;
    if (!Number.isSafeInteger(size) || size < 1) throw new RangeError("decoder pool size must be a positive integer");
    this.#workDir = resolve(options.workDir);
    if (!statSync(this.#workDir).isDirectory()) throw new Error(`${this.#workDir} is not a directory`);
    this.#limits = resolveLimits(options.limits);
    this.#command = decoderCommand(this.#workDir, this.#limits);
    this.#logger = options.logger;
    this.#slots = Array.from({ length: size }, () => ({ process: undefined, busy: false }));
  }

  /** Re-encodes `job.input` to webp at `job.output`; rejects with a `DecodeError`, the output then removed. */
  decode(job: DecodeJob): Promise<DecodeResult> {
    if (this.#closed) return Promise.reject(new DecodeError("closed", "the decoder pool is closed"));
    try {
      checkJob(job, this.#workDir);
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise<DecodeResult>((resolve, reject) => {
      this.#queue.push({ job, resolve, reject });
      this.#pump();
    });
  }

  stats(): DecoderPoolStats {
    return {
      size: this.#slots.length,
      busy: this.#slots.filter((slot) => slot.busy).length,
      queued: this.#queue.length,
      restarts: this.#restarts,
    };
  }

  /** Rejects queued and running jobs (`closed`), kills every child and resolves once all have exited. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const queued of this.#queue.splice(0)) queued.reject(new DecodeError("closed", "the decoder pool is closed"));
    await Promise.all(this.#slots.map((slot) => slot.process?.kill()));
  }

  /** Hands queued jobs to idle slots; a slot is free again before its job's caller hears back. */
  #pump(): void {
    for (const slot of this.#slots) {
      if (slot.busy) continue;
      const next = this.#queue.shift();
      if (!next) return;
      slot.busy = true;
      const release = () => {
        slot.busy = false;
        this.#pump();
      };
      void this.#run(slot, next.job).then(
        (result) => {
          release();
          next.resolve(result);
        },
        (error: unknown) => {
          release();
          next.reject(error);
        },
      );
    }
  }

  async #run(slot: Slot, job: DecodeJob): Promise<DecodeResult> {
    try {
      const decoder = await this.#decoderOf(slot);
      return await decoder.run(job, this.#limits.timeoutMs);
    } catch (error) {
      // A child that ran out of memory said so and lives on, in whatever state libvips left it: replace it.
      if (error instanceof DecodeError && error.reason === "memory") await slot.process?.kill();
      await rm(job.output, { force: true }).catch(() => undefined);
      throw this.#closed ? new DecodeError("closed", "the decoder pool was closed during the decode") : error;
    }
  }

  /** The slot's child, started (again) when it has none alive. */
  async #decoderOf(slot: Slot): Promise<DecoderProcess> {
    if (!slot.process?.alive) {
      const decoder = new DecoderProcess(this.#command, this.#logger);
      void decoder.exited.then(() => {
        if (this.#closed) return;
        this.#restarts++;
        this.#logger?.warn(`media decoder ${decoder.pid ?? "?"} exited; the next job starts another`);
      });
      slot.process = decoder;
    }
    await slot.process.ready;
    return slot.process;
  }
}
