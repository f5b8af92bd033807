import { format } from "node:util";
import { createConsola, LogLevels } from "consola";
import { describe, expect, it } from "vitest";
import { createTestVellum } from "../src/testing/index.js";
import { notesPlugin } from "./fixtures/notes-plugin.js";

/** A logger at `level` that keeps each line as `<type> <message>`. */
function capturing(level: number) {
  const lines: string[] = [];
  const logger = createConsola({
    level,
    reporters: [{ log: (entry) => lines.push(`${entry.type} ${format(...entry.args)}`) }],
  });
  return { lines, logger };
}

describe("lifecycle logs", () => {
  it("at debug: start, each plugin's setup, the migrations, ready; at info: when shutdown begins and ends", async () => {
    const { lines, logger } = capturing(LogLevels.debug);
    const t = await createTestVellum({ plugins: [notesPlugin()], config: { logger, accessLog: false } });
    await t.close();
    const debug = lines.filter((line) => line.startsWith("debug "));
    expect(debug[0]).toMatch(/^debug starting with data dir .+; plugins in setup order: notes$/);
    expect(debug).toContainEqual(expect.stringMatching(/^debug plugin notes set up in \d+\.\d ms$/));
    expect(debug).toContainEqual(expect.stringMatching(/^debug migration core\/0001_vellum_jobs applied$/));
    expect(debug).toContainEqual("debug ready: queue workers and the scheduler are running");
    const info = lines.filter((line) => line.startsWith("info "));
    expect(info).toEqual([
      expect.stringMatching(/^info shutting down \(0 request\(s\) in flight\)$/),
      expect.stringMatching(/^info shut down in \d+ ms$/),
    ]);
  });

  it("at info, nothing of the start", async () => {
    const { lines, logger } = capturing(LogLevels.info);
    const t = await createTestVellum({ plugins: [notesPlugin()], config: { logger, accessLog: false } });
    await t.close();
    expect(lines.filter((line) => line.startsWith("debug "))).toEqual([]);
    expect(lines.filter((line) => line.includes("starting with data dir"))).toEqual([]);
  });
});
