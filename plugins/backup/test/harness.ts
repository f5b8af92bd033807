import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { lstat, readdir, readFile, readlink } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

// Helpers for the disk-full and crash tests (backup-format.md §5 tests 25–27): what a directory
// tree holds, and a child process killed at a named step of a restore or a backup.

const CHILD = fileURLToPath(new URL("./fixtures/crash-child.mjs", import.meta.url));

/**
 * Everything under `dir`, by relative path: directories with their mode, symlinks with their
 * target, files with mode, size, mtime and SHA-256. Two equal results mean the trees are the same
 * byte for byte (directory mtimes aside, which creating and removing a sibling changes).
 */
export async function treeOf(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (rel: string): Promise<void> => {
    for (const name of (await readdir(join(dir, rel))).sort()) {
      const path = rel === "" ? name : `${rel}/${name}`;
      const full = join(dir, path);
      const st = await lstat(full);
      const mode = (st.mode & 0o7777).toString(8);
      if (st.isDirectory()) {
        out[path] = `dir ${mode}`;
        await walk(path);
      } else if (st.isSymbolicLink()) {
        out[path] = `link ${await readlink(full)}`;
      } else {
        const hash = createHash("sha256")
          .update(await readFile(full))
          .digest("hex");
        out[path] = `file ${mode} ${st.size} ${st.mtimeMs} ${hash}`;
      }
    }
  };
  await walk("");
  return out;
}

/** A child run: its pid (dead and reaped by now) and what it printed on stdout and stderr. */
export interface ChildRun {
  pid: number;
  output: string;
}

/**
 * Runs `fixtures/crash-child.mjs <args…> none 0` to its end; rejects unless it printed "finished".
 * `cache` is the directory the children keep their transpiled sources in.
 */
export function runChild(args: string[], cache: string): Promise<ChildRun> {
  return child([...args, "none", "0"], undefined, cache);
}

/**
 * Runs `fixtures/crash-child.mjs <args…> <step> <n>`, waits until it reports that it stopped at
 * the n-th occurrence of `step`, SIGKILLs it and waits until it is gone. Rejects if the child ends
 * by itself (it never reached the step, or failed) or does not get there within 20 s.
 */
export function killAtStep(args: string[], step: string, n: number, cache: string): Promise<ChildRun> {
  return child([...args, step, String(n)], `\nat ${step} ${n}\n`, cache);
}

function child(args: string[], stopLine: string | undefined, cache: string): Promise<ChildRun> {
  const proc = spawn(process.execPath, ["--conditions=vellum-source", CHILD, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, VELLUM_TS_CACHE: cache },
  });
  let output = "";
  let killed = false;
  return new Promise<ChildRun>((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill("SIGKILL");
      reject(new Error(`the child ${args.join(" ")} took more than 20 s:\n${output}`));
    }, 20_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString("utf8");
      if (stopLine !== undefined && !killed && output.includes(stopLine)) {
        killed = true;
        proc.kill("SIGKILL");
      }
    };
    proc.stdout.on("data", onData);
    proc.stderr.on("data", onData);
    proc.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    // "close": the process is gone and all it printed has been read.
    proc.once("close", (code, signal) => {
      clearTimeout(timer);
      const ok = stopLine === undefined ? code === 0 && output.endsWith("finished\n") : killed && signal === "SIGKILL";
      if (ok) resolve({ pid: proc.pid as number, output });
      else reject(new Error(`the child ${args.join(" ")} ended with code ${code}, signal ${signal}:\n${output}`));
    });
  });
}
