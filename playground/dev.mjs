// `npm run dev`: the playground server (src/main.ts) from the TypeScript sources of every
// package and plugin (the `vellum-source` export condition), restarted by Node's own
// --watch-path whenever a file under packages/*/src, plugins/*/src or playground/src changes.
import { spawn } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
// PLAYGROUND_WATCH (folders separated by the path delimiter) replaces the list; the test uses it.
const watched = process.env.PLAYGROUND_WATCH
  ? process.env.PLAYGROUND_WATCH.split(delimiter)
  : ["packages", "plugins"]
      .flatMap((group) => readdirSync(join(root, group)).map((name) => join(root, group, name, "src")))
      .filter((dir) => existsSync(dir))
      .concat(join(root, "playground", "src"));

const child = spawn(
  process.execPath,
  [
    "--conditions=vellum-source",
    "--enable-source-maps",
    "--import",
    new URL("loader/register.mjs", import.meta.url).href,
    ...watched.map((dir) => `--watch-path=${dir}`),
    "--watch-preserve-output",
    join(root, "playground", "src", "main.ts"),
  ],
  { cwd: root, stdio: "inherit" },
);
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
