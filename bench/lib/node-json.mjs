import { spawn } from "node:child_process";

/**
 * Runs `node <args>` in its own process and resolves with the JSON object on the last line of its
 * stdout. The child is killed after `timeoutMs`, so every run is bounded; a child that prints no
 * JSON rejects with its exit reason and last stderr line.
 * @param {string[]} args
 * @param {{ label: string, timeoutMs: number, echoStderr?: boolean }} options
 * @returns {Promise<any>}
 */
export function runNodeJson(args, { label, timeoutMs, echoStderr = false }) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk) => {
      stderr = (stderr + chunk).slice(-4_096);
      if (echoStderr) process.stderr.write(chunk);
    });
    const killer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.once("error", reject);
    child.once("close", (code, signal) => {
      clearTimeout(killer);
      try {
        resolve(JSON.parse(stdout.trim().split("\n").at(-1) ?? ""));
      } catch {
        const why = signal ? `killed by ${signal}` : `exit code ${code}`;
        reject(new Error(`${label} gave no JSON result (${why}): ${stderr.trim().split("\n").at(-1) ?? ""}`));
      }
    });
  });
}
