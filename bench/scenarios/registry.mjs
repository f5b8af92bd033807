/**
 * Scenario files in bench/scenarios/, run in this order. `--only <name>` runs one of them.
 * Adding a scenario is one line: append its file name (without `.mjs`) here.
 */
export const scenarioNames = [
  "health-live",
  "instructions",
  "instructions-creates",
  "cold-start",
  "search",
  "articles",
  "cache",
  "webhooks",
  "media",
  "backup",
  "prune",
];

/**
 * @typedef {object} LoadRow one line of the results table
 * @property {string} target
 * @property {number} rps
 * @property {number} p50 ms
 * @property {number} p99 ms
 * @property {number} peakRssBytes
 * @property {number | null} ratio rps relative to bare node:http (null when there is no baseline)
 * @property {number} errors
 * @property {number} non2xx
 * @property {number} total requests completed
 * @property {number | null} [cpuUsPerRequest] the server's CPU time per request over the run (null when not measured)
 */

/**
 * @typedef {object} ScenarioResult
 * @property {LoadRow[]} [rows] rows for the req/s table
 * @property {string[]} [lines] extra report lines (markdown list items without the dash)
 * @property {string[]} [failures] one line per target that could not be measured
 * @property {unknown} [data] anything else worth keeping in latest.json
 */

/**
 * A scenario module default-exports `async () => ScenarioResult` and never throws for a target that fails;
 * it reports the failure in `failures` instead.
 * @typedef {() => Promise<ScenarioResult>} Scenario
 */

/**
 * @param {string} name
 * @returns {Promise<Scenario>}
 */
export async function loadScenario(name) {
  const module = await import(new URL(`./${name}.mjs`, import.meta.url).href);
  return module.default;
}
