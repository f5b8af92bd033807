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
      if (bar === undefined) {
        const amounts = unit === "bytes" ? "{doneMiB}/{totalMiB} | {rate}" : "{value}/{total}";
        bar = new SingleBar(
          { stream, format: `${label} [{bar}] {percentage}% | ${amounts} | ETA {eta_formatted}`, hideCursor: true },
          Presets.shades_classic,
        );
        started = performance.now();
        bar.start(total ?? done, 0, {});
      }
      const seconds = Math.max((performance.now() - started) / 1000, 0.001);
      if (total !== undefined) bar.setTotal(total);
      bar.update(done, { doneMiB: mib(done), totalMiB: mib(total ?? done), rate: `${mib(done / seconds)}/s` });
      if (total !== undefined && done >= total) stop();
    },
  };
}
