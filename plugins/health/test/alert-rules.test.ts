import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { createTestVellum, type TestVellum } from "@vellum/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { health } from "../src/index.js";
import { type Exposition, parseExposition } from "./prometheus.js";

const RULES_FILE = join(import.meta.dirname, "..", "..", "..", "docs", "alerts", "vellum.rules.yml");
const MIB = 1024 * 1024;

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** The seed's alert thresholds: each must be expressed by the named rule. */
const SEED_THRESHOLDS: Array<[alert: string, metric: string, condition: string]> = [
  ["VellumHighErrorRate", "service_requests_total", "> 0.01"],
  ["VellumMemoryHigh", "service_memory_bytes", `> ${800 * MIB}`],
  ["VellumWalTooLarge", "service_wal_size_bytes", `> ${64 * MIB}`],
  ["VellumMigrationDrift", "service_migration_drift_detected", "> 0"],
  ["VellumWriteQueueBacklog", "service_write_queue_depth", "> 1000"],
  ["VellumAuthLockoutsRising", "service_auth_lockouts_total", "> 0"],
  ["VellumWalCheckpointSlow", "service_wal_checkpoint_duration_ms", "> 5000"],
  ["VellumDeadLetters", "service_dead_letter_queue_size", "> 10"],
];

/** Labels Prometheus adds to every scraped series. */
const TARGET_LABELS = new Set(["instance", "job"]);
const SELECTOR = /\b(service_[a-zA-Z0-9_]+)\s*(?:\{([^}]*)\})?/g;
const MATCHER = /([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)\s*"(?:[^"\\]|\\.)*"/g;

let rules: Rule[] = [];
let exposition: Exposition;
let t: TestVellum;

beforeAll(async () => {
  const doc = parse(await readFile(RULES_FILE, "utf8")) as { groups: Array<{ name: string; rules: Rule[] }> };
  rules = doc.groups.flatMap((g) => g.rules);
  t = await createTestVellum({ plugins: [health({ storageQuotaBytes: 10_000 })] });
  await t.fetch("/health/storage");
  await t.fetch("/health/db");
  await t.vellum.queue().enqueue(t.vellum.db(), "articles", "create", {});
  exposition = parseExposition(await (await t.fetch("/metrics")).text());
});
afterAll(async () => t?.close());

function familyOf(series: string): string | undefined {
  if (exposition.types.has(series)) return series;
  const base = series.replace(/_(bucket|sum|count)$/, "");
  return exposition.types.get(base) === "histogram" ? base : undefined;
}

function labelsSeen(series: string): Set<string> {
  const names = new Set<string>();
  for (const s of exposition.samples) if (s.name === series) for (const key of Object.keys(s.labels)) names.add(key);
  return names;
}

describe("docs/alerts/vellum.rules.yml", () => {
  it("is a well-formed rules file", () => {
    expect(rules.length).toBeGreaterThanOrEqual(SEED_THRESHOLDS.length);
    for (const rule of rules) {
      expect(rule.alert, JSON.stringify(rule)).toMatch(/^[A-Z][A-Za-z0-9]+$/);
      expect(typeof rule.expr, rule.alert).toBe("string");
      if (rule.for !== undefined) expect(rule.for, rule.alert).toMatch(/^\d+[smhdwy]$/);
      expect(["warning", "critical"], rule.alert).toContain(rule.labels?.severity);
      expect(rule.annotations?.summary, rule.alert).toEqual(expect.any(String));
      let depth = 0;
      for (const ch of rule.expr.replace(/"(?:[^"\\]|\\.)*"/g, '""')) {
        if ("({[".includes(ch)) depth++;
        if (")}]".includes(ch)) depth--;
        expect(depth, `${rule.alert}: unbalanced brackets`).toBeGreaterThanOrEqual(0);
      }
      expect(depth, `${rule.alert}: unbalanced brackets`).toBe(0);
    }
    expect(new Set(rules.map((r) => r.alert)).size).toBe(rules.length);
  });

  it("names only metrics and labels a live /metrics scrape exports", () => {
    for (const rule of rules) {
      const selectors = [...rule.expr.matchAll(SELECTOR)];
      expect(selectors.length, rule.alert).toBeGreaterThan(0);
      for (const [, series, matchers] of selectors) {
        expect(familyOf(series as string), `${rule.alert}: ${series}`).toBeDefined();
        const known = labelsSeen(series as string);
        for (const [, label] of (matchers ?? "").matchAll(MATCHER)) {
          expect(
            known.has(label as string) || TARGET_LABELS.has(label as string),
            `${rule.alert}: ${series}{${label}}`,
          ).toBe(true);
        }
      }
      for (const [, grouping] of rule.expr.matchAll(/\b(?:by|without)\s*\(([^)]*)\)/g)) {
        for (const label of (grouping as string).split(",").map((l) => l.trim())) {
          expect(TARGET_LABELS.has(label), `${rule.alert}: by (${label})`).toBe(true);
        }
      }
    }
  });

  it("expresses every threshold of the seed", () => {
    for (const [alert, metric, condition] of SEED_THRESHOLDS) {
      const rule = rules.find((r) => r.alert === alert);
      expect(rule, alert).toBeDefined();
      const expr = (rule as Rule).expr.replace(/\s+/g, " ");
      expect(expr, alert).toContain(metric);
      expect(expr.trim().endsWith(condition), `${alert}: ${expr}`).toBe(true);
    }
    expect(rules.find((r) => r.alert === "VellumWriteQueueBacklog")?.expr).toContain(
      "sum by (instance) (service_write_queue_depth)",
    );
    expect(rules.find((r) => r.alert === "VellumAuthLockoutsRising")?.expr).toMatch(
      /increase\(service_auth_lockouts_total\[/,
    );
    expect(rules.find((r) => r.alert === "VellumHighErrorRate")?.expr).toContain('status="5xx"');
  });
});
