import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Server, startServer, writeHeadersFor } from "./fuzz-support.js";

// The media plugin's reconcile at start, with another process serving the same data dir: before, a
// second `vellum serve` starting while the first took an upload removed everything in the work dir
// and every stored file without a row yet, the upload's own included. Now only what was left
// untouched for ten minutes goes (a crash's leftovers); what is younger may be another process's.

const API_KEY = "media-reconcile-api-key-0123456789";
const HOUR_AGO = new Date(Date.now() - 3_600_000);

let dir: string;
const servers: Server[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "vellum-media-reconcile-"));
});

afterAll(async () => {
  await Promise.all(servers.map((server) => server.stop()));
  await rm(dir, { recursive: true, force: true });
});

const env = () => ({ SERVICE_DATA_DIR: join(dir, "data"), SERVICE_API_KEY: API_KEY });

/** A stored-file name (a ULID and the webp extension) that no row names. */
const strayName = (n: number) => `01J0000000000000000000000${n}.webp`;

describe("media reconcile with two processes on one data dir", () => {
  it("leaves the files and work entries of uploads in flight, removes a crash's old leftovers, keeps every item", async () => {
    const first = await startServer(dir, env());
    servers.push(first);
    const form = new FormData();
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: "#3366cc" } })
      .png()
      .toBuffer();
    form.append("file", new Blob([new Uint8Array(png)], { type: "image/png" }), "dot.png");
    const headers = await writeHeadersFor(first.url, API_KEY);
    delete headers["content-type"];
    const uploaded = await fetch(`${first.url}/api/v1/media`, { method: "POST", headers, body: form });
    expect(uploaded.status).toBe(201);
    const item = (await uploaded.json()) as { id: string; url: string };

    // What a crash left an hour ago, and what an upload in flight in the first process has written.
    const folder = join(dir, "data", "media");
    const work = join(folder, ".work");
    await mkdir(work, { recursive: true });
    for (const [path, old] of [
      [join(folder, strayName(1)), true],
      [join(folder, strayName(2)), false],
      [join(work, "upload-old"), true],
      [join(work, "upload-in-flight"), false],
    ] as const) {
      await writeFile(path, "x");
      if (old) await utimes(path, HOUR_AGO, HOUR_AGO);
    }

    const second = await startServer(dir, env());
    servers.push(second);
    const stored = await readdir(folder);
    expect(stored).not.toContain(strayName(1));
    expect(stored).toContain(strayName(2));
    expect(await readdir(work)).toEqual(["upload-in-flight"]);
    for (const server of [first, second]) expect((await fetch(`${server.url}${item.url}`)).status).toBe(200);
  }, 60_000);
});

describe("the storage quota with two processes on one data dir", () => {
  it("counts what the other process stored: uploads through both stop at the quota, not at twice it", async () => {
    const quotaBytes = 0.02 * 1024 ** 3; // STORAGE_QUOTA_GB=0.02: about 21 MB
    const quotaEnv = {
      SERVICE_DATA_DIR: join(dir, "quota-data"),
      SERVICE_API_KEY: API_KEY,
      STORAGE_QUOTA_GB: "0.02",
      MEDIA_ALLOW_PDF: "true",
    };
    const pair = [await startServer(dir, quotaEnv), await startServer(dir, quotaEnv)];
    servers.push(...pair);
    const headers = await Promise.all(
      pair.map(async (server) => {
        const h = await writeHeadersFor(server.url, API_KEY);
        delete h["content-type"];
        return h;
      }),
    );
    const MIB = 1024 * 1024;
    let stored = 0;
    let refused: number | undefined;
    // 1 MiB documents (stored as they are), through each process in turn, until one is refused.
    for (let n = 0; n < 50 && refused === undefined; n++) {
      const form = new FormData();
      const pdf = Buffer.concat([Buffer.from("%PDF-1.4\n"), randomBytes(MIB - 9)]);
      form.append("file", new Blob([new Uint8Array(pdf)], { type: "application/pdf" }), `doc-${n}.pdf`);
      const server = n % 2;
      const res = await fetch(`${pair[server]?.url}/api/v1/media`, {
        method: "POST",
        headers: headers[server],
        body: form,
      });
      await res.arrayBuffer();
      if (res.status === 201) stored += MIB;
      else refused = res.status;
    }
    expect(refused).toBe(507);
    // Without counting the other's uploads, each process let in nearly the whole quota: about twice it in all.
    expect(stored).toBeLessThanOrEqual(quotaBytes);
    expect(stored).toBeGreaterThan(quotaBytes / 2);
  }, 60_000);
});
