import type { Kysely } from "kysely";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- runs on any transaction, whatever its schema
type Executor = Kysely<any>;

/** Writes the items collected under one key, once, just before the transaction commits. */
export type CommitFlush<T> = (trx: Executor, items: T[]) => Promise<void>;

interface Collected {
  flush: CommitFlush<unknown>;
  items: unknown[];
}

/**
 * What the writes of one kernel-managed transaction collected for their commit. Every addition is
 * logged so that rolling a savepoint back also drops what was collected after it.
 */
export class CommitScope {
  readonly #collected = new Map<string, Collected>();
  readonly #log: string[] = [];

  add<T>(key: string, item: T, flush: CommitFlush<T>): void {
    let collected = this.#collected.get(key);
    if (!collected) {
      collected = { flush: flush as CommitFlush<unknown>, items: [] };
      this.#collected.set(key, collected);
    }
    collected.items.push(item);
    this.#log.push(key);
  }

  /** A position to roll back to, taken with a savepoint. */
  mark(): number {
    return this.#log.length;
  }

  /** Drops what was collected since `mark` (its savepoint was rolled back). */
  rollbackTo(mark: number): void {
    while (this.#log.length > mark) this.#collected.get(this.#log.pop() as string)?.items.pop();
  }

  /** Runs every key's flush with its items, in the order the keys were first used. */
  async flush(trx: Executor): Promise<void> {
    for (const collected of this.#collected.values()) {
      const items = collected.items.splice(0);
      if (items.length > 0) await collected.flush(trx, items);
    }
    this.#log.length = 0;
  }
}

const scopes = new WeakMap<Executor, CommitScope>();

/** Opens the scope of a transaction the kernel runs (the queue worker's batches). */
export function openCommitScope(trx: Executor): CommitScope {
  const scope = new CommitScope();
  scopes.set(trx, scope);
  return scope;
}

/**
 * Defers part of a write to the end of its transaction, where it is done once for every write
 * of the transaction that collected an item under the same `key`: `flush(trx, items)` runs just
 * before the commit, inside the transaction. A job of the queue worker's batch that fails takes
 * its items with it (they roll back with its savepoint). This is how a search index adds the
 * word counts of a batch of 100 articles in one statement instead of 100. In a transaction the
 * kernel does not run, `flush` runs at once with this item alone.
 */
export async function collectForCommit<T>(trx: Executor, key: string, item: T, flush: CommitFlush<T>): Promise<void> {
  const scope = scopes.get(trx);
  if (scope) scope.add(key, item, flush);
  else await flush(trx, [item]);
}
