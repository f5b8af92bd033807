import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { apiKeyPath, ensureApiKey, readStoredApiKey, storedApiKeyProblem } from "../src/api-key.js";

function dataDir(): string {
  return join(mkdtempSync(join(tmpdir(), "vellum-key-")), "data");
}

describe("ensureApiKey", () => {
  it("generates a 32-byte base64url key once, stores it with mode 0600 and announces it once", async () => {
    const dir = dataDir();
    const lines: string[] = [];
    const announce = (line: string) => lines.push(line);
    const first = await ensureApiKey({ configured: undefined, dataDir: dir, announce });
    expect(first.source).toBe("generated");
    expect(first.key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(readFileSync(apiKeyPath(dir), "utf8").trim()).toBe(first.key);
    expect(statSync(apiKeyPath(dir)).mode & 0o777).toBe(0o600);
    const second = await ensureApiKey({ configured: undefined, dataDir: dir, announce });
    expect(second).toEqual({ key: first.key, source: "stored" });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(first.key);
    expect(lines[0]).toContain(apiKeyPath(dir));
  });

  it("gives starts that race on an empty data directory one key, announced once, with nothing else left in settings/", async () => {
    const dir = dataDir();
    const lines: string[] = [];
    const results = await Promise.all(
      Array.from({ length: 8 }, () =>
        ensureApiKey({ configured: undefined, dataDir: dir, announce: (line) => lines.push(line) }),
      ),
    );
    const keys = new Set(results.map((result) => result.key));
    expect(keys.size).toBe(1);
    expect(readFileSync(apiKeyPath(dir), "utf8")).toBe(`${results[0]?.key}\n`);
    expect(results.filter((result) => result.source === "generated")).toHaveLength(1);
    expect(lines).toHaveLength(1);
    expect(readdirSync(join(dir, "settings"))).toEqual(["api-key"]);
  });

  it("lets the configured key win without reading or writing the data directory", async () => {
    const dir = dataDir();
    const lines: string[] = [];
    const configured = "e".repeat(30);
    const result = await ensureApiKey({ configured, dataDir: dir, announce: (line) => lines.push(line) });
    expect(result).toEqual({ key: configured, source: "environment" });
    expect(await readStoredApiKey(dir)).toBeUndefined();
    expect(lines).toEqual([]);
  });

  it("lets the configured key win over a stored one", async () => {
    const dir = dataDir();
    mkdirSync(join(dir, "settings"), { recursive: true });
    writeFileSync(apiKeyPath(dir), `${"s".repeat(43)}\n`);
    const result = await ensureApiKey({ configured: "e".repeat(30), dataDir: dir, announce: () => {} });
    expect(result.key).toBe("e".repeat(30));
  });

  it("flags a stored key that is too short, without printing it", async () => {
    const dir = dataDir();
    mkdirSync(join(dir, "settings"), { recursive: true });
    writeFileSync(apiKeyPath(dir), "tiny-secret\n");
    const problem = storedApiKeyProblem(dir, await readStoredApiKey(dir));
    expect(problem?.variable).toBe("SERVICE_API_KEY");
    expect(problem?.message).not.toContain("tiny-secret");
    expect(storedApiKeyProblem(dir, undefined)).toBeUndefined();
  });
});
