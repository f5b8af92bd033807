import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { createTestVellum, type TestVellum } from "../src/testing/index.js";

let t: TestVellum | undefined;
let dataDir: string | undefined;
afterEach(async () => {
  await t?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  t = undefined;
  dataDir = undefined;
});

const mode = (path: string) => statSync(path).mode & 0o777;

it("sets 0700 on the data dir and its folders and 0600 on settings and database files at every start", async () => {
  dataDir = mkdtempSync(join(tmpdir(), "vellum-modes-"));
  chmodSync(dataDir, 0o755);
  for (const folder of ["settings", "db", "uploads"]) mkdirSync(join(dataDir, folder), { mode: 0o755 });
  writeFileSync(join(dataDir, "settings", "api-key"), "k".repeat(43), { mode: 0o644 });
  writeFileSync(join(dataDir, "settings", "csrf-secret"), "c".repeat(43), { mode: 0o644 });

  t = await createTestVellum({ dataDir });

  expect(mode(dataDir)).toBe(0o700);
  for (const folder of ["settings", "db", "uploads"]) expect(mode(join(dataDir, folder)), folder).toBe(0o700);
  for (const file of ["settings/api-key", "settings/csrf-secret", "db/vellum.sqlite", "db/vellum.sqlite-wal"]) {
    expect(mode(join(dataDir, file)), file).toBe(0o600);
  }
});
