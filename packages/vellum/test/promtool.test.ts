import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestVellum, type TestVellum } from "@vellum/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultPlugins } from "../src/index.js";
import { createArticle } from "./support.js";

const PROMTOOL = "/usr/bin/promtool";
const hasPromtool = existsSync(PROMTOOL);
const required = process.env.VELLUM_REQUIRE_PROMTOOL === "1";
const skip = !hasPromtool && !required;
if (skip) {
  console.warn(
    `[metrics] skipping the promtool checks: ${PROMTOOL} is not installed (apt-get install -y prometheus); ` +
      "set VELLUM_REQUIRE_PROMTOOL=1 to make its absence a failure",
  );
}

/**
 * Findings promtool may report, each for a reason written in docs/operations.md (Metrics): prom-client's
 * default Node.js gauges are named `…_total` by prom-client, and the seed fixes
 * `service_wal_checkpoint_duration_ms`. Any other finding fails.
 */
const ACCEPTED = [
  /^service_nodejs_active_(handles|requests|resources)_total non-counter metrics should not have "_total" suffix$/,
  /^service_wal_checkpoint_duration_ms metric names should not contain abbreviated units$/,
];

const root = join(import.meta.dirname, "..", "..", "..");

function promtool(args: string[], input?: string) {
  const result = spawnSync(PROMTOOL, args, { input, encoding: "utf8", timeout: 30_000 });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe.skipIf(skip)("promtool (issue 16: metrics hygiene)", () => {
  let t: TestVellum;
  let dir: string;

  beforeAll(async () => {
    if (!hasPromtool) throw new Error(`VELLUM_REQUIRE_PROMTOOL=1 but ${PROMTOOL} is not installed`);
    dir = await mkdtemp(join(tmpdir(), "vellum-promtool-"));
    t = await createTestVellum({ plugins: defaultPlugins(), dataDir: dir });
    await createArticle(t, "metrics-post");
    await t.fetch("/api/v1/search?q=metrics");
  });

  afterAll(async () => {
    await t?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("check metrics finds nothing in Vellum's own families beyond the names the seed fixes", async () => {
    const exposition = await (await t.fetch("/metrics")).text();
    expect(exposition).toContain("service_requests_total");
    const { output } = promtool(["check", "metrics"], exposition);
    const findings = output.split("\n").filter((line) => line.trim().length > 0);
    expect(findings.filter((line) => !ACCEPTED.some((accepted) => accepted.test(line)))).toEqual([]);
  });

  it("check rules accepts every alert rule file in docs/alerts", () => {
    const files = readdirSync(join(root, "docs", "alerts")).filter((name) => /\.ya?ml$/.test(name));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const { status, output } = promtool(["check", "rules", join(root, "docs", "alerts", file)]);
      expect(status, output).toBe(0);
      expect(output).toContain("SUCCESS");
    }
  });
});
