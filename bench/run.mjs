import { mkdir, writeFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { machineInfo, renderMarkdown } from "./lib/report.mjs";
import { loadScenario, scenarioNames } from "./scenarios/registry.mjs";

const { values } = parseArgs({ options: { only: { type: "string" } } });
if (values.only && !scenarioNames.includes(values.only)) {
  console.error(`unknown scenario "${values.only}"; available: ${scenarioNames.join(", ")}`);
  process.exit(2);
}
const selected = values.only ? [values.only] : scenarioNames;

const machine = machineInfo();
/** @type {Record<string, import("./scenarios/registry.mjs").ScenarioResult>} */
const results = {};
for (const name of selected) {
  const scenario = await loadScenario(name);
  results[name] = await scenario();
}

const resultsDir = new URL("./results/", import.meta.url);
await mkdir(resultsDir, { recursive: true });
await writeFile(new URL("latest.json", resultsDir), `${JSON.stringify({ machine, results }, null, 2)}\n`);
process.stdout.write(renderMarkdown(machine, results));
if (Object.values(results).some((result) => result.failures?.length)) process.exitCode = 1;
