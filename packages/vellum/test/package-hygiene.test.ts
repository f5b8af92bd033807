import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const run = promisify(execFile);

/** The published packages: every folder under packages/ and plugins/ with a package.json. */
const published = ["packages", "plugins"].flatMap((group) =>
  readdirSync(join(root, group))
    .map((name) => `${group}/${name}`)
    .filter((dir) => existsSync(join(root, dir, "package.json"))),
);

interface Manifest {
  name: string;
  license?: string;
  main?: string;
  types?: string;
  exports?: Record<string, { types?: string; default?: string }>;
}

/** What `npm pack` would put in the package's tarball (the real packlist, nothing written). */
async function packList(dir: string): Promise<string[]> {
  const { stdout } = await run("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: join(root, dir) });
  const [result] = JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>;
  return (result?.files ?? []).map((file) => file.path);
}

describe("package hygiene (issue 16)", () => {
  it.each(published)(
    "%s ships a README and the MIT LICENSE, main and types beside exports, and no build info",
    async (dir) => {
      const manifest = JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8")) as Manifest;
      expect(manifest.license).toBe("MIT");
      const dot = manifest.exports?.["."];
      expect(manifest.main).toBe(dot?.default);
      expect(manifest.types).toBe(dot?.types);
      const files = await packList(dir);
      expect(files).toEqual(expect.arrayContaining(["README.md", "LICENSE", "package.json"]));
      expect(files.filter((file) => file.includes("tsbuildinfo"))).toEqual([]);
      expect(readFileSync(join(root, dir, "LICENSE"), "utf8")).toBe(readFileSync(join(root, "LICENSE"), "utf8"));
    },
    30_000,
  );
});
