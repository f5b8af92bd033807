import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const CHILD = fileURLToPath(new URL("./fixtures/serve-child.mjs", import.meta.url));
const TSCONFIG = fileURLToPath(new URL("../tsconfig.json", import.meta.url));
const API_KEY = "crash-test-api-key-0123456789abcdef";
const KILL_AFTER_ACKS = 300;
const CONCURRENCY = 24;

interface Served {
  child: ChildProcess;
  url: string;
}

/** Starts the child on `dataDir` and resolves with its URL once it listens. */
function serve(dataDir: string): Promise<Served> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, dataDir, API_KEY], { stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr?.on("data", (chunk) => {
      stderr += chunk;
    });
    child.stdout?.on("data", (chunk: Buffer) => {
      const match = /listening (\S+)/.exec(chunk.toString());
      if (match?.[1]) resolve({ child, url: match[1] });
    });
    child.once("exit", (code, signal) =>
      reject(new Error(`child exited (${code ?? signal}) before listening: ${stderr}`)),
    );
  });
}

async function writeHeaders(url: string): Promise<Record<string, string>> {
  const res = await fetch(`${url}/docs/api/errors`);
  const token = res.headers
    .getSetCookie()
    .find((c) => c.startsWith("svc_csrf="))
    ?.split(";")[0]
    ?.slice("svc_csrf=".length);
  if (!token) throw new Error("no svc_csrf cookie");
  return {
    authorization: `Bearer ${API_KEY}`,
    cookie: `svc_csrf=${token}`,
    "x-csrf-token": token,
    "content-type": "application/json",
  };
}

describe("crash: SIGKILL while creates stream in", () => {
  let dataDir: string;
  let served: Served | undefined;

  beforeAll(() => {
    // The child runs the built plugin and kernel; build them (incremental, fast when up to date).
    const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
    execFileSync(process.execPath, [tsc, "-b", TSCONFIG], { stdio: "inherit" });
  }, 120_000);

  afterAll(async () => {
    served?.child.kill("SIGKILL");
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("after restart every create that got a 202 exists exactly once", async () => {
    dataDir = await mkdtemp(join(tmpdir(), "vellum-articles-crash-"));
    served = await serve(dataDir);
    const { child, url } = served;
    const headers = await writeHeaders(url);
    const acked = new Map<string, string>();
    let next = 0;
    let killed = false;
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once("exit", (_c, signal) => resolve(signal)));

    const worker = async () => {
      while (!killed) {
        const slug = `crash-${next++}`;
        const body = JSON.stringify({ title: slug, slug, content: `<p>${slug}</p>`, tags: ["crash"] });
        try {
          const res = await fetch(`${url}/api/v1/articles`, { method: "POST", headers, body });
          if (res.status === 202) acked.set(slug, (await res.json()).id);
        } catch {
          return; // the connection died with the process
        }
        if (acked.size >= KILL_AFTER_ACKS && !killed) {
          killed = true;
          child.kill("SIGKILL");
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    expect(await exited).toBe("SIGKILL");
    expect(acked.size).toBeGreaterThanOrEqual(KILL_AFTER_ACKS);

    served = await serve(dataDir);
    const restarted = served.url;
    for (const [slug, id] of acked) {
      const deadline = Date.now() + 20_000;
      let status = "queued";
      while (status === "queued" && Date.now() < deadline) {
        status = ((await (await fetch(`${restarted}/api/v1/jobs/${id}`)).json()) as { status: string }).status;
        if (status === "queued") await new Promise((r) => setTimeout(r, 10));
      }
      expect(status, slug).toBe("applied");
      const article = await (await fetch(`${restarted}/api/v1/articles/${slug}`)).json();
      expect(article.id, slug).toBe(id);
    }

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : "";
      const page = (await (await fetch(`${restarted}/api/v1/articles?limit=100${query}`)).json()) as {
        articles: Array<{ slug: string }>;
        next_cursor: string | null;
      };
      seen.push(...page.articles.map((a) => a.slug));
      cursor = page.next_cursor;
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    for (const slug of acked.keys()) expect(seen).toContain(slug);
    expect(seen.length).toBeLessThanOrEqual(next);
  }, 120_000);
});
