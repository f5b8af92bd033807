import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "@vellum/core";
import { afterEach, describe, expect, it } from "vitest";
import { startChild } from "./child.js";
import { boot, type Harness } from "./helpers.js";

let dataDir: string | undefined;
let h: Harness | undefined;
afterEach(async () => {
  await h?.t.close();
  h = undefined;
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
  dataDir = undefined;
});

describe("index and articles across a crash", () => {
  it("agree row for row after the writing process is killed mid-stream", async () => {
    dataDir = await mkdtemp(join(tmpdir(), "vellum-search-crash-"));
    const child = startChild("write", dataDir);
    await child.waitFor(/committed 60\n/);
    child.process.kill("SIGKILL");
    expect((await child.exited).signal).toBe("SIGKILL");

    h = await boot({ dataDir });
    const rows = await sql<{ slug: string; content: string }>`SELECT slug, content FROM fixture_articles`.execute(
      h.t.vellum.db(),
    );
    expect(rows.rows.length).toBeGreaterThan(45);
    // Every article the database kept is found, and nothing else is: n runs past the last
    // acknowledged write, which may or may not have committed before the kill.
    const kept = new Set(rows.rows.map((r) => r.slug));
    const last = Number(/committed (\d+)\n(?![\s\S]*committed)/.exec(child.output())?.[1]);
    for (let n = 0; n <= last + 1; n++) {
      const found = (await h.search(`crash${n}zz `)).results.map((r) => r.slug);
      expect(found, `c-${n}`).toEqual(kept.has(`c-${n}`) ? [`c-${n}`] : []);
    }
    expect((await h.t.vellum.service("search")?.stats())?.documents).toBe(kept.size);
  });
});
