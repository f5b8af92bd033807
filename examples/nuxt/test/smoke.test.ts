import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build, copyPublicAssets, createNitro, prepare } from "nitropack";
import { afterAll, beforeAll, expect, it } from "vitest";
import vellum, { vellumNitroModule } from "../src/module.js";

// Builds the example's server/ folder, the part of a Nuxt app that Nitro builds, with nitropack 2
// (the Nitro that Nuxt 4 runs) and the Vellum module, runs the output on 127.0.0.1 and drives it
// over HTTP. No Nuxt: see the README. Needs `npm run build` first (the bundle imports Vellum's
// built packages).

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
  work = await mkdtemp(join(tmpdir(), "vellum-example-nuxt-"));
  const nitro = await createNitro({
    rootDir: root,
    srcDir: "server",
    preset: "node-server",
    compatibilityDate: "2026-01-01",
    logLevel: 1,
    buildDir: join(work, ".nitro"),
    output: { dir: join(work, ".output") },
    modules: [vellumNitroModule({ prefix: "/cms/" })],
    // Inside this monorepo the hoisted h3 is Vellum's h3 2; a Nuxt app's is nitropack's h3 1.
    alias: { h3: dirname(createRequire(import.meta.resolve("nitropack")).resolve("h3/package.json")) },
    // Import dependencies from where they are installed instead of copying them into the output:
    // Vellum's packages are workspace links here, which tracing does not copy.
    externals: { trace: false },
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

it("the Nuxt module adds the Nitro module to nuxt.options.nitro.modules", () => {
  const nuxt = { options: { nitro: { modules: ["existing"] as unknown[] } } };
  vellum({ prefix: "/content" }, nuxt);
  expect(nuxt.options.nitro.modules).toEqual(["existing", expect.objectContaining({ name: "vellum" })]);
  expect(() => vellumNitroModule({ prefix: "cms" })).toThrow(/prefix must be a path/);
});

it("serves the host's own server route, and Nitro's 404 outside the mount", async () => {
  expect(await (await fetch(`${base}/hello`)).text()).toBe("nuxt server route\n");
  const missing = await fetch(`${base}/elsewhere`);
  expect(missing.status).toBe(404);
  expect(missing.headers.get("x-request-id")).toBeNull(); // Nitro answered, not Vellum
});

it("hands /cms and /cms/** to Vellum with the prefix taken off, query kept", async () => {
  const live = await fetch(`${base}/cms/health/live`);
  expect(await live.json()).toEqual({ live: true });
  expect(live.headers.get("x-request-id")).toBeTruthy();
  const bare = await fetch(`${base}/cms`);
  expect(bare.status).toBe(404);
  expect((await bare.json()).error.code).toBe("not_found"); // Vellum's 404: it has no route at /
  const bad = await fetch(`${base}/cms/api/v1/articles?limit=oops`);
  expect(bad.status).toBe(400); // the query reached Vellum
});

it("creates an article with the key and a CSRF token, then reads it", async () => {
  const article = { title: "Hello from Nitro 2", slug: "hello-nitro-2", content: "<p>hi</p>", tags: ["nuxt"] };
  const refused = await fetch(`${base}/cms/api/v1/articles`, {
    method: "POST",
    body: JSON.stringify(article),
    headers: { "content-type": "application/json", authorization: `Bearer ${apiKey}` },
  });
  expect(refused.status).toBe(403); // the key alone is not enough: no CSRF token

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
  expect(created.headers.get("location")).toBe("/cms/api/v1/articles/hello-nitro-2");

  let read: Response | undefined;
  for (let attempt = 0; attempt < 50; attempt++) {
    read = await fetch(`${base}/cms/api/v1/articles/hello-nitro-2`);
    if (read.status === 200) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(read?.status).toBe(200);
  expect(await read?.json()).toMatchObject({ title: article.title, tags: ["nuxt"] });
});

it("closes Vellum with Nitro on SIGTERM", async () => {
  server.kill("SIGTERM");
  const [code] = (await once(server, "exit")) as [number | null];
  expect(code).toBe(0);
  expect(stdout).toMatch(/shut down in \d+ ms/);
  expect(stderr).toBe("");
}, 20_000);
