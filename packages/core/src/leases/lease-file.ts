import { mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Database } from "better-sqlite3";
import { enableWal, loadDriver } from "../db/sqlite.js";
import { acquireFileLock, type FileLock, probeFileLock } from "./file-lock.js";

type DatabaseConstructor = Awaited<ReturnType<typeof loadDriver>>;

/**
 * Where the leases of the processes sharing a database live, beside it: the lease table
 * (`<database>.leases`, commits that skip the disk sync: a power loss ends every holder anyway, and
 * at worst loses the last renewals) and one liveness file per running holder
 * (`<database>.holders/<id>`). A holder keeps an exclusive
 * SQLite lock on its liveness file for as long as it runs, and the operating system drops that lock
 * when the process ends, however it ends; so another process on this host tells a crashed holder
 * from a live one by trying the lock, in containers and pid namespaces alike, with no pid to reuse.
 * An in-memory database has no files: it has one process.
 */
export class LeaseFile {
  /** The lease table's database. */
  readonly table: Database;
  readonly #Database: DatabaseConstructor;
  readonly #holders: string | undefined;
  #own: { id: string; lock: FileLock } | undefined;

  private constructor(Database: DatabaseConstructor, databasePath: string) {
    this.#Database = Database;
    const memory = databasePath === ":memory:";
    this.table = new Database(memory ? ":memory:" : `${databasePath}.leases`);
    // Commits skip the disk sync; checkpoints do not, so a power loss cannot leave a damaged file.
    this.table.pragma("synchronous = NORMAL");
    this.table.pragma("busy_timeout = 5000");
    this.#holders = memory ? undefined : `${databasePath}.holders`;
  }

  /** Opens the lease files of the database at `databasePath` (better-sqlite3 loaded on demand). */
  static async open(databasePath: string): Promise<LeaseFile> {
    const file = new LeaseFile(await loadDriver(), databasePath);
    // After the busy timeout is set; two processes starting together both switch a new file.
    await enableWal(file.table);
    return file;
  }

  /** Takes this process's liveness lock as holder `id` (its own file: nobody else takes it). */
  async holdLiveness(id: string): Promise<void> {
    if (this.#holders === undefined || this.#own) return;
    mkdirSync(this.#holders, { recursive: true, mode: 0o700 });
    this.#own = { id, lock: await acquireFileLock(join(this.#holders, id)) };
  }

  /** Whether holder `id` ran on this host and has ended: its liveness file is there and its lock is free. */
  isGone(id: string): boolean {
    if (this.#holders === undefined || id === this.#own?.id) return false;
    // No file: a holder elsewhere, known only by its lease's expiry.
    return probeFileLock(this.#Database, join(this.#holders, id)) === false;
  }

  /**
   * The holders whose liveness file was made before `before` (ms since the epoch), live or gone. A
   * newer file may belong to a process that made it and has yet to lock it: trying its lock then
   * would find it free and take a starting process for one that ended.
   */
  holders(before: number): string[] {
    const folder = this.#holders;
    if (folder === undefined) return [];
    return readdirSync(folder).filter(
      (id) => (statSync(join(folder, id), { throwIfNoEntry: false })?.mtimeMs ?? before) < before,
    );
  }

  /** Removes the liveness file of holder `id` (one that is gone). */
  forget(id: string): void {
    if (this.#holders !== undefined) rmSync(join(this.#holders, id), { force: true });
  }

  /** Ends this process's liveness lock and closes the lease table. */
  close(): void {
    const own = this.#own;
    this.#own = undefined;
    own?.lock.release();
    if (this.table.open) this.table.close();
  }
}
