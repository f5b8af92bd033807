// Builds the admin UI (ui/main.tsx and what it imports) into dist/ui: one minified ES module, one
// stylesheet and the icon, named by their content's hash so the server can let browsers keep them
// for a year, and dist/ui/manifest.json, which names them for the server. Run by `npm run build`
// (every workspace's `build:assets`) and by `npm install`'s prepare step.
import { createHash } from "node:crypto";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { basename } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = fileURLToPath(new URL("..", import.meta.url));
const outdir = `${root}dist/ui`;

await rm(outdir, { recursive: true, force: true });
await mkdir(outdir, { recursive: true });
const result = await build({
  absWorkingDir: root,
  entryPoints: { app: "ui/main.tsx" },
  outdir,
  entryNames: "[name]-[hash]",
  bundle: true,
  minify: true,
  format: "esm",
  target: ["es2022", "chrome111", "firefox113", "safari16.4"],
  jsx: "automatic",
  jsxImportSource: "preact",
  legalComments: "none",
  metafile: true,
  logLevel: "warning",
});
const files = Object.keys(result.metafile.outputs).map((path) => basename(path));
const script = files.find((file) => file.endsWith(".js"));
const style = files.find((file) => file.endsWith(".css"));
if (!script || !style) throw new Error(`the admin UI build made ${files.join(", ")}: no script or no stylesheet`);
const svg = await readFile(`${root}ui/icon.svg`);
const icon = `icon-${createHash("sha256").update(svg).digest("hex").slice(0, 8)}.svg`;
await writeFile(`${outdir}/${icon}`, svg);
await writeFile(`${outdir}/manifest.json`, `${JSON.stringify({ script, style, icon }, null, 2)}\n`);
