import { readFileSync } from "node:fs";
import { availableParallelism, cpus, totalmem } from "node:os";

/** @returns {{ cpu: string, cores: number, totalMemoryBytes: number, node: string, date: string }} */
export function machineInfo() {
  let cpu = cpus()[0]?.model ?? "unknown";
  try {
    cpu = /^model name\s*:\s*(.+)$/m.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1] ?? cpu;
  } catch {
    // not Linux: keep the model os.cpus() reports
  }
  return {
    cpu,
    cores: availableParallelism(),
    totalMemoryBytes: totalmem(),
    node: process.version,
    date: new Date().toISOString(),
  };
}

/** @param {ReturnType<typeof machineInfo>} machine */
export function machineHeader(machine) {
  const gib = (machine.totalMemoryBytes / 1024 ** 3).toFixed(1);
  return [
    `- CPU: ${machine.cpu}`,
    `- cores: ${machine.cores}`,
    `- memory: ${gib} GiB`,
    `- Node: ${machine.node}`,
    `- date: ${machine.date}`,
  ].join("\n");
}

/**
 * @param {string} scenario
 * @param {import("../scenarios/registry.mjs").LoadRow} row
 */
function tableRow(scenario, row) {
  const ratio = row.ratio === null ? "n/a" : `${row.ratio.toFixed(2)}×`;
  const cells = [
    scenario,
    row.target,
    row.rps.toFixed(0),
    row.p50.toFixed(1),
    row.p99.toFixed(1),
    (row.peakRssBytes / 1024 / 1024).toFixed(1),
    typeof row.cpuUsPerRequest === "number" ? row.cpuUsPerRequest.toFixed(0) : "n/a",
    ratio,
  ];
  return `| ${cells.join(" | ")} |`;
}

/**
 * Renders every scenario result as markdown: the machine header, one req/s table, then extra and failure lines.
 * @param {ReturnType<typeof machineInfo>} machine
 * @param {Record<string, import("../scenarios/registry.mjs").ScenarioResult>} results
 */
export function renderMarkdown(machine, results) {
  const table = [
    "| scenario | target | req/s | p50 ms | p99 ms | peak RSS MB | server CPU µs/req | vs bare node:http |",
    "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
  ];
  const notes = [];
  for (const [scenario, result] of Object.entries(results)) {
    for (const row of result.rows ?? []) {
      table.push(tableRow(scenario, row));
      if (row.errors || row.non2xx) {
        notes.push(`- ${scenario}, ${row.target}: ${row.errors} errors, ${row.non2xx} non-2xx responses`);
      }
    }
    for (const line of result.lines ?? []) notes.push(`- ${line}`);
    for (const failure of result.failures ?? []) notes.push(`- FAILED ${scenario}, ${failure}`);
  }
  const sections = [machineHeader(machine)];
  if (table.length > 2) sections.push(table.join("\n"));
  if (notes.length) sections.push(notes.join("\n"));
  return `${sections.join("\n\n")}\n`;
}
