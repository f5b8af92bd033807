import { join } from "node:path";
import { setImmediate as tick } from "node:timers/promises";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it, vi } from "vitest";
import { isFreshBuild, removeLeftovers } from "../src/engine/fts5/generations.js";
import { rebuild } from "../src/engine/fts5/rebuild.js";
import { RebuildRunningError, type SearchDocument } from "../src/engine/types.js";
import type { Db, GenerationRow } from "../src/tables.js";
import { boot, type Harness, insertFreshBuild } from "./helpers.js";

/**
 * Several processes share one database: while one builds a generation, the others clean up
 * leftovers (at their start, before a repair's rebuild). These tests run cleanups between the
 * steps of a slow build, and another process's start of a build in the middle of a cleanup, on
 * the real database file (the other process is a second connection to it).
 */
let h: Harness | undefined;
let other: Database.Database | undefined;
afterEach(async () => {
  vi.useRealTimers();
  other?.close();
  other = undefined;
  await h?.t.close();
  h = undefined;
});

type Plugin = Parameters<Db["withPlugin"]>[0];
type QueryNode = Parameters<Plugin["transformQuery"]>[0]["node"];

/** After each query's result, `after` is told its node (a Kysely plugin's result hook runs once it executed). */
function afterQuery(after: (node: QueryNode) => void): Plugin {
  const nodes = new Map<unknown, QueryNode>();
  return {
    transformQuery(args) {
      nodes.set(args.queryId, args.node);
      return args.node;
    },
    async transformResult(args) {
      const node = nodes.get(args.queryId);
      nodes.delete(args.queryId);
      if (node) after(node);
      return args.result;
    },
  };
}

/** A Kysely plugin that calls `seen` as each query is compiled (just before it executes). */
function onQuery(seen: (node: QueryNode) => void): Plugin {
  return {
    transformQuery(args) {
      seen(args.node);
      return args.node;
    },
    transformResult: async (args) => args.result,
  };
}

const at = new Date(Date.UTC(2026, 0, 1)).toISOString();
const docs: SearchDocument[] = Array.from({ length: 3 }, (_, n) => ({
  id: `doc-${n}`,
  slug: `doc-${n}`,
  title: `Document ${n}`,
  tags: ["harbour"],
  body: `A lighthouse keeper and word${n}.`,
  created_at: at,
  updated_at: at,
}));

/**
 * An instance and a second connection to its database file, as another process has. It never
 * waits for a lock: on the test's one thread, a wait for the instance's lock would block the instance.
 */
async function bootWithOtherProcess(): Promise<{ db: Db; raw: Database.Database }> {
  h = await boot();
  const raw = new Database(join(h.t.dataDir, "db", "vellum.sqlite"));
  other = raw;
  raw.pragma("busy_timeout = 0");
  return { db: h.t.vellum.db(), raw };
}

describe("generations shared by processes", () => {
  it("keeps a build's heartbeat fresh through every step, so cleanups elsewhere leave it alone", async () => {
    h = await boot();
    const db: Db = h.t.vellum.db();
    const raw = new Database(join(h.t.dataDir, "db", "vellum.sqlite"), { readonly: true });
    other = raw;
    vi.useFakeTimers({ toFake: ["Date"], shouldAdvanceTime: true });
    // Each step of the builder starts with a look at its row. Here every such look takes 40 s, so
    // the vocabulary phase ends more than a minute after the copy's last batch; and at each one,
    // what the previous steps committed is what a cleanup in another process would read.
    const seen: boolean[] = [];
    const slowSteps = onQuery((node) => {
      if (node.kind !== "SelectQueryNode" || !JSON.stringify(node).includes("search_generations")) return;
      const rows = raw.prepare("SELECT * FROM search_generations WHERE state = 'building'").all() as GenerationRow[];
      seen.push(...rows.map((row) => isFreshBuild(row)));
      vi.setSystemTime(Date.now() + 40_000);
    });
    let building = true;
    const cleanUp = async () => {
      while (building) {
        await removeLeftovers(db);
        await tick();
      }
    };
    const source = async function* () {
      yield docs;
    };
    const [summary] = await Promise.all([
      rebuild(db.withPlugin(slowSteps), source).finally(() => {
        building = false;
      }),
      cleanUp(),
    ]);
    expect(summary).toMatchObject({ documents: docs.length });
    expect(seen.length).toBeGreaterThan(4);
    expect(seen).toEqual(seen.map(() => true));
  });

  it("of two rebuilds started together, one builds and the other is told a build runs, never a UNIQUE error", async () => {
    const { db, raw } = await bootWithOtherProcess();
    // The other process starts a build as the plugin does: unless one is building, in one write transaction.
    const startOther = raw.transaction(() => {
      const rows = raw.prepare("SELECT * FROM search_generations").all() as GenerationRow[];
      if (rows.some((row) => isFreshBuild(row))) return "refused";
      insertFreshBuild(raw);
      return "started";
    });
    // It tries after every look at the generations this rebuild takes, until it gets an answer: a
    // look outside a write transaction lets it in between the look and the create.
    let busy = 0;
    let theirs: string | undefined;
    const otherStartsAfterEachLook = afterQuery((node) => {
      if (theirs || node.kind !== "SelectQueryNode" || !JSON.stringify(node).includes("search_generations")) return;
      try {
        theirs = startOther.immediate();
      } catch (error) {
        if ((error as { code?: unknown }).code !== "SQLITE_BUSY") throw error;
        busy++;
      }
    });
    const source = async function* () {
      yield docs;
    };
    const outcome = await rebuild(db.withPlugin(otherStartsAfterEachLook), source).catch((error: unknown) => error);
    expect(busy).toBeGreaterThan(0);
    // Exactly one of the two builds: this one, or the other's (then this one is refused).
    if (outcome instanceof Error) {
      expect(outcome).toBeInstanceOf(RebuildRunningError);
      expect(theirs).toBe("started");
    } else {
      expect(outcome).toMatchObject({ documents: docs.length });
      expect(theirs).not.toBe("started");
    }
  });

  it("leaves the tables of a build another process starts while it cleans up", async () => {
    const { db, raw } = await bootWithOtherProcess();
    const startBuild = raw.transaction(() => {
      const generation = insertFreshBuild(raw);
      raw.exec(`CREATE TABLE search_docs_g${generation} (x)`);
      return generation;
    });
    let started: number | undefined;
    let waited = false;
    // The other process starts its build just as the cleanup lists the tables.
    const startBuildAtTableList = onQuery((node) => {
      if (started !== undefined || waited || !JSON.stringify(node).includes("sqlite_master")) return;
      try {
        started = startBuild.immediate();
      } catch (error) {
        if ((error as { code?: unknown }).code !== "SQLITE_BUSY") throw error;
        waited = true;
      }
    });
    await removeLeftovers(db.withPlugin(startBuildAtTableList));
    // A start that had to wait for the cleanup goes through once the cleanup has committed.
    started ??= startBuild.immediate();
    const tables = raw.prepare("SELECT name FROM sqlite_master WHERE name = ?").pluck().all(`search_docs_g${started}`);
    expect(tables).toEqual([`search_docs_g${started}`]);
    expect(waited).toBe(true);
  });
});
