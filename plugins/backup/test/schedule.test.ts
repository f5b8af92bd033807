import { describe, expect, it } from "vitest";
import { AdaptiveSchedule, DEFAULT_BASE_MS, DEFAULT_MAX_MS } from "../src/policy/index.js";
import { BackupError } from "../src/snapshot/index.js";

const MIN = 60 * 1000;
const HOUR = 60 * MIN;
/** An arbitrary monotonic origin (performance.now() values are not Unix times). */
const T = 1_234_567;

/** Runs generations as soon as they are due, each taking `tookMs`; the intervals between starts. */
function intervals(schedule: AdaptiveSchedule, dirty: (run: number) => boolean, runs: number, tookMs = 1000): number[] {
  const out: number[] = [];
  let previous: number | undefined;
  for (let run = 0; run < runs; run += 1) {
    const start = schedule.nextAt(dirty(run));
    expect(schedule.due(start, dirty(run))).toBe(true);
    expect(schedule.due(start - 1, dirty(run))).toBe(false);
    if (previous !== undefined) out.push(start - previous);
    schedule.completed({ startMono: start, endMono: start + tookMs, dirty: dirty(run) });
    previous = start;
  }
  return out;
}

describe("AdaptiveSchedule (§4)", () => {
  it("defaults to 5 min and 6 h", () => {
    expect(DEFAULT_BASE_MS).toBe(5 * MIN);
    expect(DEFAULT_MAX_MS).toBe(6 * HOUR);
  });

  it("backs off 5, 10, 20, 40, 80, 160, 320 min, then 6 h while clean", () => {
    const schedule = new AdaptiveSchedule({ nowMono: T, newestAgeMs: undefined });
    const seen = intervals(schedule, (run) => run === 0, 11);
    expect(seen.map((ms) => ms / MIN)).toEqual([5, 10, 20, 40, 80, 160, 320, 360, 360, 360]);
    expect(schedule.k).toBe(10);
  });

  it("returns to 5 min as soon as there are writes, and max(lastStart + 5 min, lastEnd) while dirty", () => {
    const schedule = new AdaptiveSchedule({ nowMono: T, newestAgeMs: undefined });
    intervals(schedule, (run) => run === 0, 6); // clean for a while: k = 5, next clean interval 160 min
    expect(schedule.k).toBe(5);
    const lastStart = schedule.nextAt(false) - 160 * MIN;
    // A write 30 min into the 160-minute wait: due at once (lastStart + 5 min has long passed).
    expect(schedule.due(lastStart + 30 * MIN, false)).toBe(false);
    expect(schedule.due(lastStart + 30 * MIN, true)).toBe(true);
    expect(schedule.nextAt(true)).toBe(lastStart + 5 * MIN);

    schedule.completed({ startMono: lastStart + 30 * MIN, endMono: lastStart + 31 * MIN, dirty: true });
    expect(schedule.k).toBe(0);
    expect(schedule.nextAt(true)).toBe(lastStart + 35 * MIN);
    expect(schedule.nextAt(false)).toBe(lastStart + 35 * MIN);

    // A generation that took longer than 5 min: the next dirty one starts when it ended.
    schedule.completed({ startMono: lastStart + 35 * MIN, endMono: lastStart + 47 * MIN, dirty: true });
    expect(schedule.nextAt(true)).toBe(lastStart + 47 * MIN);
    expect(schedule.nextAt(false)).toBe(lastStart + 40 * MIN);
  });

  it("keeps 5 min intervals under constant writes", () => {
    const schedule = new AdaptiveSchedule({ nowMono: T, newestAgeMs: undefined });
    expect(intervals(schedule, () => true, 6, 20_000)).toEqual([5 * MIN, 5 * MIN, 5 * MIN, 5 * MIN, 5 * MIN]);
    expect(schedule.k).toBe(0);
  });

  it("is due at once after start with no generation, or with one at least 5 min old, dirty or clean", () => {
    for (const newestAgeMs of [undefined, 5 * MIN, 3 * HOUR, 40 * 24 * HOUR]) {
      const schedule = new AdaptiveSchedule({ nowMono: T, newestAgeMs });
      expect(schedule.nextAt(true)).toBe(T);
      expect(schedule.nextAt(false)).toBe(T);
      expect(schedule.due(T, false)).toBe(true);
    }
  });

  it("counts a recent generation as the last run after start", () => {
    const schedule = new AdaptiveSchedule({ nowMono: T, newestAgeMs: 2 * MIN });
    expect(schedule.due(T, true)).toBe(false);
    expect(schedule.nextAt(true)).toBe(T + 3 * MIN);
    expect(schedule.nextAt(false)).toBe(T + 3 * MIN);
    // A newest generation from the future (the wall clock stepped back): as if it had just run.
    expect(new AdaptiveSchedule({ nowMono: T, newestAgeMs: -HOUR }).nextAt(true)).toBe(T + 5 * MIN);
  });

  it("leaves k alone after a failed run, but waits from its start", () => {
    const schedule = new AdaptiveSchedule({ nowMono: T, newestAgeMs: undefined });
    intervals(schedule, (run) => run === 0, 3); // k = 2
    const start = schedule.nextAt(false);
    schedule.completed({ startMono: start, endMono: start + MIN, dirty: false, ok: false });
    expect(schedule.k).toBe(2);
    expect(schedule.nextAt(false)).toBe(start + 20 * MIN);
    schedule.completed({ startMono: start + 20 * MIN, endMono: start + 21 * MIN, dirty: true, ok: false });
    expect(schedule.k).toBe(2);
    expect(schedule.nextAt(true)).toBe(start + 25 * MIN);
  });

  it("takes other intervals", () => {
    const schedule = new AdaptiveSchedule({ nowMono: 0, newestAgeMs: undefined, baseMs: 1000, maxMs: 5000 });
    expect(intervals(schedule, (run) => run === 0, 6, 10)).toEqual([1000, 2000, 4000, 5000, 5000]);
  });

  it("refuses nonsense", () => {
    for (const bad of [
      { baseMs: 0 },
      { baseMs: -1 },
      { baseMs: Number.NaN },
      { maxMs: MIN },
      { maxMs: Number.POSITIVE_INFINITY },
    ]) {
      expect(() => new AdaptiveSchedule({ nowMono: T, newestAgeMs: undefined, ...bad })).toThrow(BackupError);
    }
    const schedule = new AdaptiveSchedule({ nowMono: T, newestAgeMs: undefined });
    expect(() => schedule.completed({ startMono: T, endMono: T - 1, dirty: true })).toThrow(BackupError);
  });
});
