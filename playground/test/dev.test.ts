import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { articles } from "../src/content.js";

// Runs `npm run dev`'s entry (playground/dev.mjs) on a temporary data dir and port 0: the sources
// through the TypeScript loader, Node's --watch-path, the seed. It watches a temporary folder
// instead of the sources (PLAYGROUND_WATCH), so that edits elsewhere in the tree do not restart
// it mid-test. The first start transpiles every source file (cached afterwards), hence the long
// bounds.

const dev = fileURLToPath(new URL("../dev.mjs", import.meta.url));
let work: string;
let dataDir: string;
let child: ChildProcess;
let output = "";

/** Resolves with the URL of the `count`-th "ready at" line. */
async function ready(count: number, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const urls = [...output.matchAll(/playground ready at (http:\/\/\S+)/g)].map((m) => m[1] as string);
    if (urls.length >= count) return urls[count - 1] as string;
    if (child.exitCode !== null) throw new Error(`dev exited (${child.exitCode}):\n${output}`);
    if (Date.now() > deadline) throw new Error(`no ready line #${count} in ${timeoutMs} ms:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const json = async (url: string) => (await fetch(url)).json() as Promise<Record<string, unknown>>;
const slugs = async (base: string, query = "") =>
  ((await json(`${base}/api/v1/articles?limit=50${query}`)).articles as { slug: string }[]).map((a) => a.slug).sort();

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "vellum-playground-"));
  dataDir = join(work, "data");
  await mkdir(join(work, "watched"));
  child = spawn(process.execPath, [dev], {
    env: { ...process.env, PLAYGROUND_DATA_DIR: dataDir, PLAYGROUND_WATCH: join(work, "watched"), PORT: "0" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
}, 10_000);

afterAll(async () => {
  if (child.exitCode === null && child.signalCode === null) {
    child.kill("SIGKILL");
    await once(child, "exit");
  }
  await rm(work, { recursive: true, force: true });
});

it("seeds the demo content, prints the URL and the key, reseeds nothing after a reload", async () => {
  const base = await ready(1, 120_000);
  const expected = articles.map((a) => a.slug).sort();
  expect(await slugs(base)).toEqual(expected);
  expect(await slugs(base, "&tag=guide")).toEqual(["media-uploads", "tags-and-search", "writing-articles"]);
  expect(output).toContain(`seed:      ${expected.length} article(s) created, 0 already there`);

  const key = (await readFile(join(dataDir, "settings", "api-key"), "utf8")).trim();
  expect(output).toContain(`API key:   ${key}`);
  const { token } = (await json(`${base}/api/v1/csrf`)) as { token: string };
  const extra = { title: "Added by the test", slug: "added-by-test", content: "<p>x</p>" };
  const write = await fetch(`${base}/api/v1/articles`, {
    method: "POST",
    body: JSON.stringify(extra),
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${key}`,
      "x-csrf-token": token,
      cookie: `svc_csrf=${token}`,
    },
  });
  expect(write.status).toBe(202);

  const welcome = (await json(`${base}/api/v1/articles/welcome`)) as { content: string };
  const image = /<img src="(\/media\/[^"]+\.webp)"/.exec(welcome.content)?.[1];
  expect(image).toBeDefined();
  const media = await fetch(`${base}${image}`);
  expect(media.status).toBe(200);
  expect(media.headers.get("content-type")).toBe("image/webp");

  // A change in a watched folder restarts the server; the seed finds its articles and the image.
  await writeFile(join(work, "watched", "changed.ts"), "export {};\n");
  const again = await ready(2, 90_000);
  expect(output).toMatch(/Restarting/);
  expect(output).toContain(`seed:      0 article(s) created, ${expected.length} already there; image ${image}`);
  expect(await slugs(again)).toEqual([...expected, extra.slug].sort());
}, 240_000);

it("stops the server on SIGTERM", async () => {
  const shutdowns = () => [...output.matchAll(/shut down in \d+ ms/g)].length;
  const before = shutdowns(); // 1: the restart above
  child.kill("SIGTERM");
  await once(child, "exit");
  expect(shutdowns()).toBe(before + 1);
}, 20_000);
