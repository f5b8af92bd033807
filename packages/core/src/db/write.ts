import { CompiledQuery, type Transaction } from "kysely";
import type { VellumHookBus } from "../hooks/hooks.js";
import type { HookName, HookPayload } from "../hooks/types.js";
import { inTransactionNow, runNow } from "./statements-now.js";
import type { AnyDb, AnyTransaction } from "./types.js";

/** Writes the items collected under one key, once, just before the transaction commits. */
export type CommitFlush<T> = (trx: AnyDb, items: T[]) => Promise<void>;

/** Hooks whose payload carries the write's transaction: they run through `Write.commit`. */
export type CommitHookName = { [N in HookName]: HookPayload<N> extends { trx: unknown } ? N : never }[HookName];

/** What the owner of a write (`ctx.write`, a queue job) works with. */
export interface Write<DB> {
  /** The transaction, typed with the writing plugin's tables. */
  readonly trx: Transaction<DB>;
  /** Runs the subscribers of commit hook `name` in this transaction (how a failure counts: `HookKind`). */
  commit<N extends CommitHookName>(name: N, payload: Omit<HookPayload<N>, "trx">): Promise<void>;
  /** Calls hook `name` once the transaction has committed (never if it rolls back). */
  after<N extends HookName>(name: N, payload: HookPayload<N>): void;
  /** Runs `fn` once the transaction has committed (never if it rolls back). */
  afterCommit(fn: () => void | Promise<void>): void;
}

export type WriteErrorReporter = (
  error: unknown,
  info: { plugin: string; hook?: string; tags?: Record<string, string> },
) => void;

interface Collected {
  flush: CommitFlush<unknown>;
  items: unknown[];
  /** The plugin whose step first collected under the key: a failing flush is reported as its. */
  plugin: string;
  /** A failing flush fails the transaction instead of being rolled back to its savepoint and reported. */
  required: boolean;
}

/** A required flush failed (`cause`), and the transaction with it. */
export class RequiredFlushError extends Error {
  constructor(
    readonly key: string,
    readonly plugin: string,
    cause: unknown,
  ) {
    super(`the required flush '${key}' of plugin '${plugin}' failed`, { cause });
  }
}

/**
 * SQLite rolled the whole transaction back itself when a step failed (it does after `SQLITE_FULL`,
 * `SQLITE_IOERR` or `SQLITE_NOMEM`), so there was no savepoint to return to; the step's error is
 * the `cause`. Nothing of the transaction is left to go on with: whoever isolates steps rethrows it.
 */
export class TransactionLostError extends Error {
  constructor(cause: unknown) {
    super("SQLite rolled the transaction back after a step failed", { cause });
  }
}

/** For code that isolates a failing step: a lost transaction is not the step's failure, it ends the write. */
export function rethrowIfLost(error: unknown): void {
  if (error instanceof TransactionLostError) throw error;
}

/** How a collected flush's failure counts (`collectForCommit`). */
export interface CollectOptions {
  /**
   * The flush's failure fails the whole transaction, like a required commit subscriber's: for
   * what must commit with the change or not at all (an outbox). Default false: rolled back and
   * reported, the write commits.
   */
  required?: boolean;
}

const SAVEPOINT = {
  begin: CompiledQuery.raw("SAVEPOINT vellum_step"),
  release: CompiledQuery.raw("RELEASE SAVEPOINT vellum_step"),
  rollback: CompiledQuery.raw("ROLLBACK TO SAVEPOINT vellum_step"),
};

/**
 * What the steps of one kernel-managed transaction left for its commit: items collected for a
 * flush before it, work for after it. Every addition is logged, so rolling a savepoint back also
 * drops what was added after it.
 */
export class WriteScope {
  readonly #collected = new Map<string, Collected>();
  readonly #after: Array<() => void | Promise<void>> = [];
  readonly #log: Array<string | null> = [];
  /** The plugin whose step runs now (the write's owner, or a commit subscriber). */
  step: string;

  constructor(owner: string) {
    this.step = owner;
  }

  collect<T>(key: string, item: T, flush: CommitFlush<T>, required: boolean): void {
    let collected = this.#collected.get(key);
    if (!collected) {
      collected = { flush: flush as CommitFlush<unknown>, items: [], plugin: this.step, required };
      this.#collected.set(key, collected);
    }
    collected.items.push(item);
    this.#log.push(key);
  }

  defer(fn: () => void | Promise<void>): void {
    this.#after.push(fn);
    this.#log.push(null);
  }

  /** A position to roll back to, taken with a savepoint. */
  mark(): number {
    return this.#log.length;
  }

  /** Drops what was added since `mark` (its savepoint was rolled back). */
  rollbackTo(mark: number): void {
    while (this.#log.length > mark) {
      const key = this.#log.pop();
      if (key === null) this.#after.pop();
      else if (key !== undefined) this.#collected.get(key)?.items.pop();
    }
  }

  /**
   * Runs every key's flush with its items (in the order keys were first used), each in a
   * savepoint; a required flush runs without one, and its failure rejects (`RequiredFlushError`).
   */
  async flush(trx: AnyDb, report: (error: unknown, key: string, plugin: string) => void): Promise<void> {
    for (const [key, collected] of this.#collected) {
      const items = collected.items.splice(0);
      if (items.length === 0) continue;
      if (collected.required)
        await collected.flush(trx, items).catch((error: unknown) => {
          throw new RequiredFlushError(key, collected.plugin, error);
        });
      else
        await inSavepoint(trx, () => collected.flush(trx, items)).catch((error: unknown) => {
          rethrowIfLost(error);
          report(error, key, collected.plugin);
        });
    }
  }

  /** After the commit: runs the deferred work in order; a failure is reported and the rest still run. */
  async afterCommit(report: (error: unknown) => void): Promise<void> {
    for (const fn of this.#after.splice(0)) {
      try {
        await fn();
      } catch (error) {
        report(error);
      }
    }
  }
}

/**
 * Runs `step` in a savepoint: released when it resolves, rolled back (and rethrown) when it throws.
 * In a transaction the kernel holds, the savepoint is taken and released at once (`runNow`).
 */
export async function inSavepoint<T>(trx: AnyDb, step: () => Promise<T>, scope?: WriteScope): Promise<T> {
  if (!runNow(trx, SAVEPOINT.begin, [])) await trx.executeQuery(SAVEPOINT.begin);
  const mark = scope?.mark() ?? 0;
  try {
    const result = await step();
    if (!runNow(trx, SAVEPOINT.release, [])) await trx.executeQuery(SAVEPOINT.release);
    return result;
  } catch (error) {
    await trx.executeQuery(SAVEPOINT.rollback).catch(() => {
      throw new TransactionLostError(error);
    });
    await trx.executeQuery(SAVEPOINT.release);
    scope?.rollbackTo(mark);
    throw error;
  }
}

const scopes = new WeakMap<AnyDb, WriteScope>();

/**
 * Defers part of a write to the end of its transaction, done once for every write of the
 * transaction that collected under `key`: `flush(trx, items)` runs just before the commit, in a
 * savepoint (a failing flush is rolled back and reported; the write still commits), or, with
 * `required`, as part of the transaction (a failing flush fails it). A step that is rolled back
 * takes its items with it. A search index adds the word counts of a whole batch in one statement
 * this way, and an outbox a batch's events. In a transaction the kernel does not run, `flush`
 * runs at once.
 */
export async function collectForCommit<T>(
  trx: AnyDb,
  key: string,
  item: T,
  flush: CommitFlush<T>,
  options: CollectOptions = {},
): Promise<void> {
  const scope = scopes.get(trx);
  if (scope) scope.collect(key, item, flush, options.required ?? false);
  else await flush(trx, [item]);
}

/**
 * The kernel's transactional write primitive, used by `ctx.write`, by every queue worker's batch
 * and so by every plugin that writes: one path from the owner's work through the commit hooks,
 * the collected flushes and the commit to the after-commit hooks.
 */
export class Writes {
  readonly #db: AnyDb;
  readonly #bus: VellumHookBus;
  readonly #report: WriteErrorReporter;

  constructor(db: AnyDb, bus: VellumHookBus, report: WriteErrorReporter) {
    this.#db = db;
    this.#bus = bus;
    this.#report = report;
  }

  /** One write of `owner`: its own transaction, committed, then its after-commit work. */
  async run<R>(owner: string, work: (w: Write<never>) => Promise<R>): Promise<R> {
    const { value, committed } = await this.transaction(this.#db, owner, (trx, scope) =>
      work(this.bind(owner, trx, scope)),
    );
    await committed();
    return value;
  }

  /**
   * Runs `steps` in one transaction on `connection` with a scope, flushing what was collected
   * before the commit. Resolves once committed, with `committed()` to run what was deferred: the
   * caller calls it after it let go of the connection (the queue worker holds it for a batch),
   * so after-commit hooks may use the database.
   */
  async transaction<R>(
    connection: AnyDb,
    owner: string,
    steps: (trx: AnyTransaction, scope: WriteScope) => Promise<R>,
  ): Promise<{ value: R; committed: () => Promise<void> }> {
    const scope = new WriteScope(owner);
    const value = await connection.transaction().execute(async (trx) => {
      scopes.set(trx, scope);
      // The steps run one after the other: their prepared statements and savepoints need not queue.
      const release = inTransactionNow(this.#db, trx);
      try {
        const result = await steps(trx, scope);
        await scope.flush(trx, (error, key, plugin) => this.#report(error, { plugin, tags: { flush: key } }));
        return result;
      } finally {
        release();
      }
    });
    const committed = () =>
      scope.afterCommit((error) => this.#report(error, { plugin: owner, tags: { step: "after-commit" } }));
    return { value, committed };
  }

  /** The `Write` of `owner` in a transaction the kernel runs. */
  bind<DB>(owner: string, trx: AnyTransaction, scope: WriteScope): Write<DB> {
    return {
      trx: trx as Transaction<DB>,
      commit: async (name, payload) => {
        const subscribers = this.#bus.commitSubscribers(name);
        if (subscribers.length === 0) return;
        // Assigned, not spread: see `errorResponse` (http/envelope.ts).
        const full = Object.assign({}, payload, { trx }) as never;
        for (const { plugin, fn, required } of subscribers) {
          scope.step = plugin;
          try {
            if (plugin === owner || required) await fn(full);
            else
              await inSavepoint(trx, async () => fn(full), scope).catch((error: unknown) => {
                rethrowIfLost(error);
                this.#report(error, { plugin, hook: name });
              });
          } finally {
            scope.step = owner;
          }
        }
      },
      after: (name, payload) => scope.defer(() => this.#bus.call(name, payload)),
      afterCommit: (fn) => scope.defer(fn),
    };
  }
}
