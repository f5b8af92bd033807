import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { Db, GenerationRow } from "../../tables.js";
import type { RebuildOptions, RebuildResult, SearchDocument } from "../types.js";
import { discardGeneration, generationRow, promote, removeLeftovers, startBuild, touch } from "./generations.js";
import { insertBatch } from "./index-writes.js";
import { dropGenerationTables, generationTables } from "./schema.js";
import { addBuildCounts, describePending, finishVocabulary } from "./vocabulary.js";

/**
 * Articles created more than this after the build began were written to the new generation by
 * the commit hook; the copy stops when it reaches them, so steady publishing cannot keep it
 * chasing the newest article.
 */
const CAUGHT_UP_MARGIN_MS = 1000;
/** New words given stems and typo-correction variants per transaction at the end of a build. */
const DESCRIBE_CHUNK = 10_000;

async function stillBuilding(db: Db, generation: number): Promise<GenerationRow> {
  const row = await generationRow(db, generation);
  if (row?.state !== "building") throw new Error(`search generation ${generation} was abandoned`);
  if (row.broken) throw new Error(`a live write to search generation ${generation} failed`);
  return row;
}

/**
 * Non-destructive rebuild. A new generation is created beside the live one; from then on every
 * article write (through the commit hook) goes to both. The builder copies batches from `source`
 * into the new generation, each in a short transaction, yielding in between so requests and
 * writes go on; rows that live writes already put there (or deleted) win over the batch, which
 * may have been read earlier. The copy ends at the first batch of articles created after the
 * build began (they are there already). The builder counts words and tags in memory and adds them at the
 * end (live writes add theirs as they happen; additions commute), then gives new words their
 * stems and typo variants in chunks. One transaction drops words no document has and makes the
 * new generation live; then the old tables are dropped.
 */
export async function rebuild(
  db: Db,
  source: () => AsyncIterable<SearchDocument[]>,
  options: RebuildOptions = {},
): Promise<RebuildResult> {
  const started = performance.now();
  await removeLeftovers(db);
  const tables = await startBuild(db);
  const caughtUp = Date.now() + CAUGHT_UP_MARGIN_MS;
  const total = options.total ?? null;
  let done = 0;
  let documents = 0;
  let previous: number | null;
  const terms = new Map<string, number>();
  const tags = new Map<string, number>();
  // Every step ends by renewing the heartbeat that cleanups in other processes read, so no phase
  // of a long build (the copy, the word counts, the descriptions) looks abandoned to them.
  const step = <T>(work: (trx: Db) => Promise<T>) =>
    db.transaction().execute(async (trx) => {
      await stillBuilding(trx, tables.generation);
      const result = await work(trx);
      await touch(trx, tables.generation, 0, false);
      return result;
    });
  try {
    options.onProgress?.({ done, total });
    for await (const batch of source()) {
      if (batch[0] && Date.parse(batch[0].created_at) > caughtUp) break;
      await step((trx) => insertBatch(trx, tables, batch, terms, tags));
      done += batch.length;
      options.onProgress?.({ done, total });
      await yieldToEventLoop();
    }
    await step((trx) => addBuildCounts(trx, tables, terms, tags));
    while ((await step((trx) => describePending(trx, tables, DESCRIBE_CHUNK))) > 0) await yieldToEventLoop();
    documents = (await stillBuilding(db, tables.generation)).documents;
    previous = await promote(db, tables.generation, (trx) => finishVocabulary(trx, tables));
  } catch (error) {
    await discardGeneration(db, tables.generation).catch(() => undefined);
    throw error;
  }
  // The new generation is live; old tables that fail to drop now are removed as leftovers later.
  if (previous !== null) await dropGenerationTables(db, generationTables(previous)).catch(() => undefined);
  return {
    generation: tables.generation,
    previousGeneration: previous,
    documents,
    durationMs: Math.round(performance.now() - started),
  };
}
