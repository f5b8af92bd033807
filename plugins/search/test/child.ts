import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const CHILD = fileURLToPath(new URL("./fixtures/child.mjs", import.meta.url));

export interface RunningChild {
  process: ChildProcess;
  output(): string;
  /** Resolves with the first line matching `pattern`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts test/fixtures/child.mjs with everything it prints captured. */
export function startChild(mode: "serve" | "write", dataDir: string): RunningChild {
  const child = spawn(process.execPath, ["--conditions=vellum-source", CHILD, mode, dataDir], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const waiters: Array<() => void> = [];
  const onData = (chunk: Buffer) => {
    output += chunk.toString("utf8");
    for (const wake of waiters.splice(0)) wake();
  };
  child.stdout?.on("data", onData);
  child.stderr?.on("data", onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => {
      for (const wake of waiters.splice(0)) wake();
      resolve({ code, signal });
    }),
  );
  return {
    process: child,
    output: () => output,
    exited,
    waitFor(pattern, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(output);
          if (match) return resolve(match);
          if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
            return reject(new Error(`child did not print ${pattern}; output:\n${output.slice(-2000)}`));
          }
          waiters.push(check);
          setTimeout(check, 100).unref();
        };
        check();
      });
    },
  };
}
