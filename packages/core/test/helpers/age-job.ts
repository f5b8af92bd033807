import { encodeTime } from "ulidx";
import type { AnyDb } from "../../src/db/types.js";

/**
 * Makes job `id` look made and last updated `ms` ago: the time part of its id (job ids are ULIDs
 * of the time they were made), `created_at` and `updated_at`. Returns its new id.
 */
export async function ageJob(db: AnyDb, id: string, ms: number): Promise<string> {
  const at = Date.now() - ms;
  const aged = `${encodeTime(at, 10)}${id.slice(10)}`;
  const iso = new Date(at).toISOString();
  await db
    .updateTable("_vellum_jobs")
    .set({ id: aged, created_at: iso, updated_at: iso })
    .where("id", "=", id)
    .execute();
  return aged;
}
