import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfigFile } from "../src/config-file.js";
import { readEnvironment } from "../src/env.js";

function tempDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "vellum-config-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

describe("loadConfigFile", () => {
  it("returns nothing when there is no config file", async () => {
    expect(await loadConfigFile(tempDir({}))).toEqual({ config: {}, problems: [] });
  });

  it("loads vellum.config.ts with TypeScript syntax, plugins included", async () => {
    const cwd = tempDir({
      "vellum.config.ts": [
        "interface Plugin { name: string }",
        "const extra: Plugin = { name: 'extra' };",
        "const port: number = 4100;",
        "export default { port, dataDir: 'content', plugins: [extra, false], features: ['ai'] as string[] };",
      ].join("\n"),
    });
    const loaded = await loadConfigFile(cwd);
    expect(loaded.problems).toEqual([]);
    expect(loaded.path).toBe(join(cwd, "vellum.config.ts"));
    expect(loaded.config).toEqual({
      port: 4100,
      dataDir: "content",
      plugins: [{ name: "extra" }, false],
      features: ["ai"],
    });
  });

  it("loads vellum.config.mjs and feeds it under the environment", async () => {
    const cwd = tempDir({ "vellum.config.mjs": "export default { port: 4200, host: '0.0.0.0', logLevel: 4 };" });
    const loaded = await loadConfigFile(cwd);
    expect(loaded.config).toEqual({ port: 4200, host: "0.0.0.0", logLevel: 4 });
    const { config } = readEnvironment({ HOST: "127.0.0.2" }, {}, { cwd, file: loaded.config });
    expect(config).toMatchObject({ port: 4200, host: "127.0.0.2", logLevel: 4, baseUrl: "http://127.0.0.2:4200" });
  });

  it("prefers .ts over .mjs", async () => {
    const cwd = tempDir({
      "vellum.config.mjs": "export default { port: 1 };",
      "vellum.config.ts": "export default { port: 2 };",
    });
    expect((await loadConfigFile(cwd)).config.port).toBe(2);
  });

  it("reports a file that fails to load, or exports no object, or a bad port, in one line", async () => {
    const broken = await loadConfigFile(tempDir({ "vellum.config.mjs": "export default {" }));
    const notObject = await loadConfigFile(tempDir({ "vellum.config.js": "export default 42;" }));
    const badPort = await loadConfigFile(tempDir({ "vellum.config.mjs": "export default { port: 'x' };" }));
    for (const [loaded, file] of [
      [broken, "vellum.config.mjs"],
      [notObject, "vellum.config.js"],
      [badPort, "vellum.config.mjs"],
    ] as const) {
      expect(loaded.config).toEqual({});
      expect(loaded.problems).toHaveLength(1);
      expect(loaded.problems[0]?.variable).toBe(file);
      expect(loaded.problems[0]?.message).not.toContain("\n");
    }
  });
});
