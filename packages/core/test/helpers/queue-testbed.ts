// Per-test job queues on real SQLite files in temporary directories, closed and removed after
// each test. Call `queueTestbed()` once at the top of a test file.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import type { VellumDatabase } from "../../src/db/types.js";
import type { JobQueue } from "../../src/queue/job-queue.js";
import type { JobRecord } from "../../src/queue/types.js";
import {
  type AnyDb,
  type AnyTransaction,
  createJobQueue,
  type JobQueueHarness,
  type JobQueueHarnessOptions,
  openQueueDatabase,
} from "./job-queue.js";

/** Records a job's effect (its payload) in the `effects` table, inside the job's write. */
export async function insertEffect(trx: AnyTransaction, job: JobRecord): Promise<void> {
  await trx
    .insertInto("effects")
    .values({ job_id: job.id, value: JSON.stringify(job.payload) })
    .execute();
}

/** The payloads of the jobs whose effects committed, in job id order. */
export async function effectValues(db: AnyDb): Promise<unknown[]> {
  const rows = await db.selectFrom("effects").select("value").orderBy("job_id").execute();
  return rows.map((row) => JSON.parse(row.value));
}

export interface QueueTestbed {
  /** A database path in a fresh temporary directory. */
  tempPath(): Promise<string>;
  /** Opens (and migrates) the database at `path`, with an `effects` table for handlers to write to. */
  open(path: string): Promise<VellumDatabase>;
  /** A queue on `database`, stopped after the test. */
  newQueue(database: VellumDatabase, options?: JobQueueHarnessOptions): JobQueueHarness;
  /** A queue on a new database. */
  setup(): Promise<JobQueueHarness & { db: AnyDb; database: VellumDatabase }>;
}

export function queueTestbed(): QueueTestbed {
  const dirs: string[] = [];
  const databases: VellumDatabase[] = [];
  const queues: JobQueue[] = [];

  afterEach(async () => {
    await Promise.all(queues.splice(0).map((queue) => queue.stop()));
    await Promise.all(databases.splice(0).map((database) => database.close()));
    await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  });

  const testbed: QueueTestbed = {
    async tempPath() {
      const dir = await mkdtemp(join(tmpdir(), "vellum-queue-"));
      dirs.push(dir);
      return join(dir, "queue.db");
    },
    async open(path) {
      const database = await openQueueDatabase(path);
      databases.push(database);
      await database.kysely.schema
        .createTable("effects")
        .ifNotExists()
        .addColumn("job_id", "text", (c) => c.notNull())
        .addColumn("value", "text", (c) => c.notNull())
        .execute();
      return database;
    },
    newQueue(database, options) {
      const harness = createJobQueue(database, options);
      queues.push(harness.queue);
      return harness;
    },
    async setup() {
      const database = await testbed.open(await testbed.tempPath());
      return { db: database.kysely, database, ...testbed.newQueue(database) };
    },
  };
  return testbed;
}
