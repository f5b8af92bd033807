import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

/**
 * Runs `bench/search/<script>` in its own process (so its peak RSS is its own), passes its stderr
 * through as progress, and resolves with the JSON object on the last line of its stdout.
 * @param {string} script @param {string[]} args @param {number} timeoutMs
 */
export function runChild(script, args, timeoutMs) {
  const path = fileURLToPath(new URL(`./${script}`, import.meta.url));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk) => {
      stderr = (stderr + chunk).slice(-4_096);
      process.stderr.write(chunk);
    });
    const killer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.once("error", reject);
    child.once("close", (code, signal) => {
      clearTimeout(killer);
      const line = stdout.trim().split("\n").at(-1) ?? "";
      try {
        resolve(JSON.parse(line));
      } catch {
        const why = signal ? `killed by ${signal}` : `exit code ${code}`;
        reject(new Error(`${script} gave no result (${why}): ${stderr.trim().split("\n").at(-1) ?? ""}`));
      }
    });
  });
}
