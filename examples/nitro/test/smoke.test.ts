import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build, copyPublicAssets, createNitro, prepare } from "nitro";
import { afterAll, beforeAll, expect, it } from "vitest";

// Builds the example with Nitro's node-server preset into a temporary folder, runs the output
// as its own process on 127.0.0.1 and drives it over HTTP. Needs `npm run build` first: the
// bundle imports Vellum's built packages.

const root = fileURLToPath(new URL("..", import.meta.url));
const apiKey = "example-key-0123456789-abcdef";
let work: string;
let server: ChildProcess;
let stdout = "";
let stderr = "";
let base: string;

async function freePort(): Promise<number> {
  const probe = createServer().listen(0, "127.0.0.1");
  await once(probe, "listening");
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "vellum-example-nitro-"));
  const nitro = await createNitro({
    rootDir: root,
    preset: "node-server",
    logLevel: 1,
    buildDir: join(work, ".nitro"),
    output: { dir: join(work, ".output") },
    // Import dependencies from where they are installed instead of copying them into the output:
    // inside this monorepo Vellum's packages are workspace links, which tracing does not copy.
    externals: { noTrace: true },
  });
  await prepare(nitro);
  await copyPublicAssets(nitro);
  await build(nitro);
  await nitro.close();

  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  server = spawn(process.execPath, [join(work, ".output/server/index.mjs")], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      CMS_API_KEY: apiKey,
      CMS_DATA_DIR: join(work, "data"),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  server.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  server.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "Listening on" in 20 s: ${stdout} ${stderr}`)), 20_000);
    server.stdout?.on("data", () => {
      if (stdout.includes("Listening on")) resolve(clearTimeout(timer));
    });
    server.once("exit", (code) => reject(new Error(`server exited (${code}): ${stderr}`)));
  });
}, 180_000);

afterAll(async () => {
  if (server && server.exitCode === null) {
    server.kill("SIGKILL");
    await once(server, "exit");
  }
  if (work) await rm(work, { recursive: true, force: true });
});

it("serves the host's own route, and Nitro's 404 outside the mount", async () => {
  const home = await fetch(`${base}/`);
  expect(await home.text()).toBe("nitro home\n");
  const missing = await fetch(`${base}/elsewhere`);
  expect(missing.status).toBe(404);
  expect(missing.headers.get("x-request-id")).toBeNull(); // Nitro answered, not Vellum
});

it("hands /cms/** to Vellum with the prefix taken off", async () => {
  const live = await fetch(`${base}/cms/health/live`);
  expect(await live.json()).toEqual({ live: true });
  expect(live.headers.get("x-request-id")).toBeTruthy();
  expect((await (await fetch(`${base}/cms/health`)).json()).status).toBe("ok");
  const unknown = await fetch(`${base}/cms/no-such-route`);
  expect(unknown.status).toBe(404);
  expect((await unknown.json()).error.code).toBe("not_found");
});

it("creates an article with the key and a CSRF token, then reads it", async () => {
  const article = { title: "Hello from Nitro", slug: "hello-nitro", content: "<p>hi</p>", tags: ["nitro"] };
  const refused = await fetch(`${base}/cms/api/v1/articles`, {
    method: "POST",
    body: JSON.stringify(article),
    headers: { "content-type": "application/json" },
  });
  expect(refused.status).toBe(401);

  const { token } = (await (await fetch(`${base}/cms/api/v1/csrf`)).json()) as { token: string };
  const created = await fetch(`${base}/cms/api/v1/articles`, {
    method: "POST",
    body: JSON.stringify(article),
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${apiKey}`,
      "x-csrf-token": token,
      cookie: `svc_csrf=${token}`,
    },
  });
  expect(created.status).toBe(202);
  expect(created.headers.get("location")).toBe("/cms/api/v1/articles/hello-nitro");

  let read: Response | undefined;
  for (let attempt = 0; attempt < 50; attempt++) {
    read = await fetch(`${base}/cms/api/v1/articles/hello-nitro`);
    if (read.status === 200) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(read?.status).toBe(200);
  expect(await read?.json()).toMatchObject({ title: article.title, tags: ["nitro"], content: "<p>hi</p>" });
  const list = (await (await fetch(`${base}/cms/api/v1/articles?tag=nitro`)).json()) as { articles: unknown[] };
  expect(list.articles).toHaveLength(1);
});

it("closes Vellum and exits cleanly on SIGTERM", async () => {
  server.kill("SIGTERM");
  const [code] = (await once(server, "exit")) as [number | null];
  expect(code).toBe(0);
  expect(stdout).toMatch(/shut down in \d+ ms/);
  expect(stderr).toBe("");
}, 20_000);
