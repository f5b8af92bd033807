import { createRequire } from "node:module";
import { basename } from "node:path";
import { fileURLToPath } from "node:url";
import type { DecodeLimits } from "./limits.js";

/**
 * The child is plain JavaScript, shipped as is in `src/decode/child/` and resolved against the package's
 * `src` from here: the same path works from the TypeScript sources (vitest) and from the built `dist`, and
 * nothing has to be built before a child can start. (Node 20 cannot run TypeScript in a child process, and
 * tsc does not copy `.mjs` files to `dist`.)
 */
const CHILD_DIR = fileURLToPath(new URL("../../src/decode/child/", import.meta.url));
const CHILD_MAIN = `${CHILD_DIR}main.mjs`;

/** The permission model's flag: `--permission` where it is stable (Node 22.13+), experimental on Node 20. */
const PERMISSION_FLAG = process.allowedNodeEnvironmentFlags.has("--permission")
  ? "--permission"
  : "--experimental-permission";

/**
 * No JIT in the child: Node 24's V8 reserves a 512 MB code range at start, which counts against
 * `ulimit -d`, so under a cap below about 580 MB it could not even start; a JIT-less V8 reserves
 * none. The child's JavaScript is a few calls into sharp, whose work is native, and no JIT also
 * means no writable executable pages in the process that parses hostile files. On Node 20 and 22,
 * `--jitless` prints a warning that it turns WebAssembly off unless that is asked for as well;
 * Node 24 turns it off silently and refuses the flag.
 */
const JIT_FLAGS = Number(process.versions.node.split(".")[0]) >= 24 ? ["--jitless"] : ["--jitless", "--no-expose-wasm"];

/** How to spawn one decoder child. */
export interface ChildCommand {
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
}

/**
 * The `node_modules` folders Node searches from the child's location, where sharp, its platform
 * package (`@img/sharp-…`) and their dependencies are, however npm hoisted them.
 */
function moduleFolders(): string[] {
  const paths = createRequire(CHILD_MAIN).resolve.paths("sharp") ?? [];
  return paths.filter((path) => basename(path) === "node_modules");
}

/**
 * The command that starts a decoder child, confined as far as Node 20 and a plain shell allow:
 * - memory: `/bin/sh` sets `ulimit -d` to `memoryMb` and turns core dumps off, then execs Node with
 *   `--max-old-space-size` = `memoryMb` and without a JIT (`JIT_FLAGS`). RLIMIT_DATA counts what is
 *   writable and private (the V8 heap, malloc, thread stacks, libvips' pixel buffers), not address
 *   space merely reserved, so unlike `ulimit -v`
 *   it need not cover the 0.8 to 1.4 GB that V8, glibc and libvips reserve up front; Node and sharp use
 *   about 95 MB of it at rest. An allocation over it fails: libvips reports it (`memory`), or the child
 *   dies (`crashed`). `MALLOC_ARENA_MAX` and a single libuv thread keep glibc's per-thread arenas and
 *   stacks from eating into it;
 * - files: Node's permission model lets the child's JavaScript read only its own folder, the `node_modules`
 *   folders and the work dir, and write only the work dir; no child processes, no workers. sharp is a native
 *   addon, which the model admits only with `--allow-addons`, and native code is outside the model: libvips
 *   could read or write anywhere. That is why the child also refuses any path outside the work dir before
 *   handing it to sharp, reads SVG itself (librsvg then has no base URL to resolve references against) and
 *   runs with the work dir as its cwd;
 * - environment: nothing of the parent's (no secrets), only the two allocator settings above (and not
 *   even the `PWD` the shell exports).
 */
export function decoderCommand(workDir: string, limits: DecodeLimits): ChildCommand {
  const shell = `ulimit -c 0 && ulimit -d ${limits.memoryMb * 1024} && unset PWD && exec "$0" "$@"`;
  const reads = [CHILD_DIR, ...moduleFolders(), workDir].map((path) => `--allow-fs-read=${path}`);
  const node = [
    `--max-old-space-size=${limits.memoryMb}`,
    ...JIT_FLAGS,
    PERMISSION_FLAG,
    "--allow-addons",
    ...reads,
    `--allow-fs-write=${workDir}`,
    "--disable-warning=ExperimentalWarning",
    "--disable-warning=SecurityWarning",
  ];
  return {
    file: "/bin/sh",
    args: ["-c", shell, process.execPath, ...node, CHILD_MAIN, workDir, JSON.stringify(limits)],
    cwd: workDir,
    env: { MALLOC_ARENA_MAX: "2", UV_THREADPOOL_SIZE: "1" },
  };
}
