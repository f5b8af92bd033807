import { type Kysely, sql } from "kysely";

/**
 * Runs `read` in one read transaction (`BEGIN DEFERRED`): every query sees the same snapshot of the
 * database, and no write lock is taken. `db.transaction()` opens with `BEGIN IMMEDIATE` (it takes
 * the write lock at once, so that writes of several processes wait for each other instead of
 * failing), which a read that only wants a consistent view should not hold: with several processes
 * on one database it would keep their writes waiting for the length of the read.
 */
export function readSnapshot<DB, T>(db: Kysely<DB>, read: (snapshot: Kysely<DB>) => Promise<T>): Promise<T> {
  return db.connection().execute(async (connection) => {
    await sql`BEGIN DEFERRED`.execute(connection);
    try {
      const value = await read(connection);
      await sql`COMMIT`.execute(connection);
      return value;
    } catch (error) {
      await sql`ROLLBACK`.execute(connection);
      throw error;
    }
  });
}
