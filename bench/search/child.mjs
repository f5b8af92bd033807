import { runNodeJson } from "../lib/node-json.mjs";
import { fileURLToPath } from "node:url";

/**
 * Runs `bench/search/<script>` in its own process (so its peak RSS is its own), passes its stderr
 * through as progress, and resolves with the JSON object on the last line of its stdout.
 * @param {string} script @param {string[]} args @param {number} timeoutMs
 */
export function runChild(script, args, timeoutMs) {
  const path = fileURLToPath(new URL(`./${script}`, import.meta.url));
  return runNodeJson([path, ...args], { label: script, timeoutMs, echoStderr: true });
}
