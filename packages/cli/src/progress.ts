import type { Writable } from "node:stream";
import type { CommandIO } from "@vellum/core";
import { Presets, SingleBar } from "cli-progress";

const MIB = 1024 * 1024;

/** `12.3 MiB`. */
const mib = (bytes: number) => `${(bytes / MIB).toFixed(1)} MiB`;

/** A terminal's progress bar for a plugin command (cli-progress), and how to stop it when the command ends. */
export interface ProgressBar {
  update: CommandIO["progress"];
  stop(): void;
}

/**
 * One cli-progress bar at a time on `stream` (a terminal): items as `done/total`, bytes as MiB with
 * the rate and the time left. A bar stops by itself when `done` reaches `total`, or when the
 * command ends.
 */
export function createProgressBar(stream: Writable): ProgressBar {
  let bar: SingleBar | undefined;
  let started = 0;
  const stop = () => {
    bar?.stop();
    bar = undefined;
  };
  return {
    stop,
    update(done, total, label = "progress", unit = "items") {
      const amounts = (value: number) => {
        const seconds = Math.max((performance.now() - started) / 1000, 0.001);
        return { doneMiB: mib(value), totalMiB: mib(total ?? value), rate: `${mib(value / seconds)}/s` };
      };
      if (bar === undefined) {
        const shown = unit === "bytes" ? "{doneMiB}/{totalMiB} | {rate}" : "{value}/{total}";
        bar = new SingleBar(
          { stream, format: `${label} [{bar}] {percentage}% | ${shown} | ETA {eta_formatted}`, hideCursor: true },
          Presets.shades_classic,
        );
        started = performance.now();
        bar.start(total ?? done, 0, amounts(0));
      }
      if (total !== undefined) bar.setTotal(total);
      bar.update(done, amounts(done));
      if (total !== undefined && done >= total) stop();
    },
  };
}
