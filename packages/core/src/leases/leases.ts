import { hostname } from "node:os";
import type { Statement } from "better-sqlite3";
import { ulidFactory } from "../ids.js";
import type { LeaseFile } from "./lease-file.js";

/** How long a lease lasts without renewal: a process that hung, or ended on another host, is replaced after it. */
export const DEFAULT_LEASE_MS = 30_000;

export interface LeaseWatcher {
  /** This process now holds the lease: start the work it guards. */
  acquired(): void;
  /** It no longer does (another process holds it, or it could not be renewed in time); resolve once the work stopped. */
  lost(): void | Promise<void>;
}

interface LeaseRow {
  name: string;
  holder: string;
  expires_at: number;
}

/** The part of a holder's name (`<host>/<pid>/<ULID>`) that names its liveness file. */
const holderId = (holder: string) => holder.slice(holder.lastIndexOf("/") + 1);

/**
 * Named leases that let several processes share one database: each queue is worked, and each
 * scheduled task run, by the one process holding its lease. They live in files of their own beside
 * the database (`LeaseFile`), so renewing them is no write to the content: a backup's or the WAL
 * upkeep's notion of "something was written" stays true of an idle service.
 *
 * A holder renews its leases every quarter of `ttlMs` and counts on them for four fifths of it, so
 * another process takes a lease over only after its holder stopped renewing (`ttlMs`), or at its
 * next renewal when the holder ran on this host and has ended (its liveness lock is free: a crash,
 * a kill, a restarted container) or released it (`stop()`, a clean shutdown).
 */
export class Leases {
  /** This process's name in the table: `<host>/<pid>/<ULID>`, a new one per instance. */
  readonly holder: string;
  readonly ttlMs: number;
  readonly #onError: (error: unknown) => void;
  readonly #watchers = new Map<string, LeaseWatcher | undefined>();
  readonly #held = new Set<string>();
  /** Per lease, its last acquired or lost call: the next one runs after it. */
  readonly #transitions = new Map<string, Promise<void>>();
  #validUntil = 0;
  #file: LeaseFile | undefined;
  #statements: { rows: Statement; take: Statement; release: Statement } | undefined;
  #timer: NodeJS.Timeout | undefined;
  /** Set by `stop()`: a `start()` still under way then ends without taking anything. */
  #stopped = false;

  /** `ttlMs`: at least 1,000 (the kernel checks `leaseMs`). */
  constructor(options: { ttlMs?: number; onError: (error: unknown) => void }) {
    this.ttlMs = options.ttlMs ?? DEFAULT_LEASE_MS;
    this.#onError = options.onError;
    this.holder = `${hostname()}/${process.pid}/${ulidFactory()()}`;
  }

  /** Asks for lease `name` from the next renewal on (at once when running); `watcher` hears when it is won and lost. */
  watch(name: string, watcher?: LeaseWatcher): void {
    this.#watchers.set(name, watcher);
    if (this.#file) this.#renew();
  }

  /** Whether this process holds `name` and may count on it now. */
  holds(name: string): boolean {
    return this.#held.has(name) && Date.now() < this.#validUntil;
  }

  /** Keeps the leases in `file`: takes its liveness lock and the free leases now, then renews and retakes them until `stop()`. */
  async start(file: LeaseFile): Promise<void> {
    this.#stopped = false;
    const table = file.table;
    table.exec(
      "CREATE TABLE IF NOT EXISTS leases (name TEXT PRIMARY KEY, holder TEXT NOT NULL, expires_at INTEGER NOT NULL)",
    );
    this.#statements = {
      rows: table.prepare("SELECT name, holder, expires_at FROM leases"),
      take: table.prepare(
        "INSERT INTO leases (name, holder, expires_at) VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at",
      ),
      release: table.prepare("DELETE FROM leases WHERE holder = ?"),
    };
    await file.holdLiveness(holderId(this.holder));
    if (this.#stopped) return;
    this.#file = file;
    this.#renew();
    // Liveness files of holders that ended and hold no lease (a crashed process that held none).
    const named = new Set((this.#statements.rows.all() as LeaseRow[]).map((row) => holderId(row.holder)));
    for (const id of file.holders(Date.now() - this.ttlMs)) if (!named.has(id) && file.isGone(id)) file.forget(id);
    await Promise.all(this.#transitions.values());
  }

  /** Stops renewing, hears `lost` for every lease held, and releases them for another process to take at once. */
  async stop(): Promise<void> {
    this.#stopped = true;
    const file = this.#file;
    this.#file = undefined;
    clearTimeout(this.#timer);
    await Promise.all([...this.#held].map((name) => this.#lose(name)));
    if (!file?.table.open) return;
    try {
      this.#statements?.release.run(this.holder);
    } catch (error) {
      this.#onError(error);
    }
  }

  /**
   * In one transaction: renews this holder's leases and takes the expired ones and those of gone
   * holders; then hears what changed, and comes back in a quarter of `ttlMs`.
   */
  #renew(): void {
    clearTimeout(this.#timer);
    const statements = this.#statements;
    const names = [...this.#watchers.keys()];
    if (!this.#file || !statements || names.length === 0) return;
    const file = this.#file;
    const started = Date.now();
    const gone = new Map<string, boolean>();
    let next = this.ttlMs / 4;
    try {
      const mine = file.table
        .transaction(() => {
          const rows = new Map((statements.rows.all() as LeaseRow[]).map((row) => [row.name, row]));
          const take = names.filter((name) => {
            const row = rows.get(name);
            if (!row || row.holder === this.holder || row.expires_at <= started) return true;
            const id = holderId(row.holder);
            if (!gone.has(id)) gone.set(id, file.isGone(id));
            return gone.get(id) === true;
          });
          for (const name of take) statements.take.run(name, this.holder, started + this.ttlMs);
          return new Set(take);
        })
        .immediate();
      for (const [id, ended] of gone) if (ended) file.forget(id);
      this.#validUntil = started + (this.ttlMs * 4) / 5;
      for (const name of names) {
        if (mine.has(name) && !this.#held.has(name)) {
          this.#held.add(name);
          void this.#transition(name, "acquired");
        } else if (!mine.has(name) && this.#held.has(name)) void this.#lose(name);
      }
    } catch (error) {
      // Not renewed: the work goes on only while the last renewal still counts, and the next try
      // comes no later than its end, so the work stops before another process may take it over.
      const left = this.#validUntil - Date.now();
      if (left <= 0) for (const name of [...this.#held]) void this.#lose(name);
      else next = Math.min(next, left);
      this.#onError(error);
    }
    this.#timer = setTimeout(() => this.#renew(), next);
    this.#timer.unref();
  }

  #lose(name: string): Promise<void> {
    this.#held.delete(name);
    return this.#transition(name, "lost");
  }

  #transition(name: string, kind: keyof LeaseWatcher): Promise<void> {
    const watcher = this.#watchers.get(name);
    const next = (this.#transitions.get(name) ?? Promise.resolve())
      .then(() => watcher?.[kind]())
      .catch((error: unknown) => this.#onError(error));
    this.#transitions.set(name, next);
    return next;
  }
}
