// `npm install`'s prepare step: builds the workspace (`tsc -b tsconfig.build.json`, then each
// workspace's `build:assets`). A production install (`--omit=dev`) has no TypeScript to build with:
// it keeps the `dist` a full install built (`npm ci && npm run build`, then `npm prune --omit=dev`
// or a second install with `--omit=dev`), and says so instead of failing on a missing compiler.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
let tsc;
try {
  tsc = require.resolve("typescript/bin/tsc");
} catch {
  const built = existsSync(new URL("../packages/vellum/dist/index.js", import.meta.url));
  console.log(
    built
      ? "prepare: TypeScript is not installed (a production install); using the dist already built"
      : "prepare: TypeScript is not installed and nothing is built; build first with `npm ci && npm run build`, then `npm prune --omit=dev` (docs/operations.md, Deploying)",
  );
  process.exit(0);
}
const result = spawnSync(process.execPath, [tsc, "-b", "tsconfig.build.json"], { stdio: "inherit" });
if (result.status !== 0) process.exit(result.status ?? 1);
// What a workspace builds besides its TypeScript (the admin UI's bundle), as `npm run build` does.
const assets = spawnSync("npm", ["run", "build:assets", "--workspaces", "--if-present"], { stdio: "inherit" });
process.exit(assets.status ?? 1);
