// `npm install`'s prepare step: builds the workspace (`tsc -b tsconfig.build.json`). A production
// install (`--omit=dev`) has no TypeScript to build with: it keeps the `dist` a full install built
// (`npm ci && npm run build`, then `npm prune --omit=dev` or a second install with `--omit=dev`),
// and says so instead of failing on a missing compiler.
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
process.exit(result.status ?? 1);
