import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "@vellum/cli";
import { createTestVellum } from "@vellum/core/testing";
import { afterEach, expect, it, vi } from "vitest";
import { defaultPlugins } from "../src/index.js";

const dirs: string[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function waitApplied(t: Awaited<ReturnType<typeof createTestVellum>>, id: string) {
  for (let i = 0; i < 300; i++) {
    if ((await (await t.fetch(`/api/v1/jobs/${id}`)).json()).status === "applied") return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`job ${id} not applied`);
}

it("vellum reindex rebuilds the index of a data dir in its own process-like run and search still finds everything", async () => {
  const cwd = await mkdtemp(join(tmpdir(), "vellum-reindex-"));
  dirs.push(cwd);
  const dataDir = join(cwd, "data");
  const t = await createTestVellum({ plugins: defaultPlugins(), dataDir });
  for (const slug of ["first-post", "second-post", "third-post"]) {
    const res = await t.fetch("/api/v1/articles", {
      method: "POST",
      json: { title: `Lighthouse ${slug}`, slug, content: "<p>keepers and lanterns</p>" },
      headers: await t.writeHeaders(),
    });
    await waitApplied(t, (await res.json()).id);
  }
  await t.close();

  const out: string[] = [];
  vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => out.push(String(chunk)) > 0);
  const code = await runCli({
    argv: ["reindex", "--data-dir", dataDir],
    env: { SERVICE_LOG_LEVEL: "warn", SERVICE_API_KEY: "reindex-test-key-0123456789" },
    cwd,
    defaultPlugins,
    version: "test",
  });
  vi.restoreAllMocks();
  expect(code).toBe(0);
  expect(out.join("")).toMatch(/^reindex: 3 documents in \d+\.\d s \(generation \d+\)\n$/);

  const after = await createTestVellum({ plugins: defaultPlugins(), dataDir });
  const found = await (await after.fetch("/api/v1/search?q=lighthouse")).json();
  expect(found.total).toBe(3);
  await after.close();
});
