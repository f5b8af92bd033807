import { type ChildProcess, spawn } from "node:child_process";
import { DecodeError, type DecodeFailure } from "./errors.js";
import type { DecodeJob, DecodeResult } from "./job.js";
import type { ChildCommand } from "./launch.js";

/** Where a decoder reports what its child wrote to stderr; a consola instance fits. */
export interface DecodeLogger {
  warn(message: string): void;
}

/** How long a child may take to load Node and sharp before it is given up as crashed. */
const START_TIMEOUT_MS = 10_000;
/** Characters of the child's stderr kept to tell a death by memory from a crash. */
const STDERR_TAIL = 4096;
/** What V8, glib, libvips and the C++ runtime print when an allocation fails. */
const OUT_OF_MEMORY = /out of memory|failed to allocate|bad_alloc|cannot allocate memory/i;

/** The child's messages: ready once sharp is loaded, then one answer per job. */
type ChildMessage =
  | { ready: true }
  | { id: number; result: DecodeResult }
  | { id: number; error: { reason: DecodeFailure; message: string } };

interface Running {
  id: number;
  resolve(result: DecodeResult): void;
  reject(error: DecodeError): void;
  timer: NodeJS.Timeout;
}

/**
 * One decoder child process, running one job at a time. A job ends with the child's answer, or with the
 * child's death (`timeout` when this killed it for time, `memory` when its stderr says it ran out, `crashed`
 * otherwise); a dead child never comes back, the pool starts another.
 */
export class DecoderProcess {
  /** Resolves once the child has loaded sharp; rejects (`crashed`) if it dies or stalls before. */
  readonly ready: Promise<void>;
  /** Resolves once the child has exited and its stderr is read. */
  readonly exited: Promise<void>;
  readonly #child: ChildProcess;
  #stderr = "";
  #running: Running | undefined;
  #timedOut = false;
  #dead = false;
  #nextId = 0;

  constructor(command: ChildCommand, logger?: DecodeLogger) {
    this.#child = spawn(command.file, command.args, {
      cwd: command.cwd,
      env: command.env,
      stdio: ["ignore", "ignore", "pipe", "ipc"],
    });
    this.#child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      this.#stderr = (this.#stderr + chunk).slice(-STDERR_TAIL);
      logger?.warn(`media decoder ${this.pid ?? "?"}: ${chunk.trimEnd()}`);
    });
    this.exited = new Promise<void>((resolve) => {
      // 'close' rather than 'exit': stderr is read to its end. Only 'error' when the spawn itself failed.
      this.#child.once("close", () => resolve(this.#died()));
      this.#child.on("error", (error) => {
        this.#stderr += `\n${error.message}`;
        if (this.#child.pid === undefined) resolve(this.#died());
      });
    });
    this.ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => this.#child.kill("SIGKILL"), START_TIMEOUT_MS);
      this.#child.once("message", () => {
        clearTimeout(timer);
        resolve();
      });
      void this.exited.then(() => {
        clearTimeout(timer);
        reject(new DecodeError("crashed", `the decoder exited before it was ready: ${this.#stderr.trim()}`));
      });
    });
    this.#child.on("message", (message: ChildMessage) => this.#answer(message));
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  get alive(): boolean {
    return !this.#dead;
  }

  /** Runs `job`; over `timeoutMs` the child is killed and the job fails with `timeout`. */
  run(job: DecodeJob, timeoutMs: number): Promise<DecodeResult> {
    if (this.#dead) return Promise.reject(new DecodeError("crashed", "the decoder has exited"));
    if (this.#running) throw new Error("a decoder runs one job at a time");
    const id = ++this.#nextId;
    return new Promise<DecodeResult>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#timedOut = true;
        this.#child.kill("SIGKILL");
      }, timeoutMs);
      this.#running = { id, resolve, reject, timer };
      this.#child.send({ id, job });
    });
  }

  /** Kills the child (SIGKILL) and resolves once it has exited. */
  kill(): Promise<void> {
    if (!this.#dead) this.#child.kill("SIGKILL");
    return this.exited;
  }

  #answer(message: ChildMessage): void {
    const running = this.#running;
    if (!running || !("id" in message) || message.id !== running.id) return;
    this.#settle();
    if ("result" in message) running.resolve(message.result);
    else running.reject(new DecodeError(message.error.reason, message.error.message));
  }

  #died(): void {
    if (this.#dead) return;
    this.#dead = true;
    this.#settle()?.reject(this.#causeOfDeath());
  }

  /** Why a job failed with its child: killed for time, out of memory by its own account, or a crash. */
  #causeOfDeath(): DecodeError {
    const stderr = this.#stderr.trim();
    if (this.#timedOut) return new DecodeError("timeout", "the decoder took too long and was killed");
    if (OUT_OF_MEMORY.test(stderr)) return new DecodeError("memory", `the decoder ran out of memory: ${stderr}`);
    const { exitCode, signalCode } = this.#child;
    return new DecodeError("crashed", `the decoder died (${signalCode ?? exitCode})${stderr && `: ${stderr}`}`);
  }

  /** Ends the running job's timer and hands the job over, once. */
  #settle(): Running | undefined {
    const running = this.#running;
    if (running) clearTimeout(running.timer);
    this.#running = undefined;
    return running;
  }
}
