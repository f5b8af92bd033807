import { randomBytes } from "node:crypto";
import { request as httpRequest, createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { createTestVellum, type TestVellum } from "@vellum/core/testing";
import { articles } from "@vellum/plugin-articles";
import { health } from "@vellum/plugin-health";
import { type MediaItem, type MediaOptions, media } from "@vellum/plugin-media";
import sharp from "sharp";
import { afterEach, describe, expect, it } from "vitest";
// The decoder's hostile images, made by the media plugin's own test fixtures.
import { grayPng, manyFrameGif, withBrokenCrc } from "../../../plugins/media/test/fixtures/images.js";
import { ARTICLES, waitFor } from "./support.js";

// Media end to end: a real instance (SQLite file, real decoder processes running sharp) with the articles, media
// and health plugins, uploads as multipart bodies through `vellum.fetch` and, where the socket matters, real HTTP.

let t: TestVellum | undefined;
let server: Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
  await t?.close();
  t = undefined;
});

async function boot(options: Partial<MediaOptions> = {}, quotaGb?: number): Promise<TestVellum> {
  t = await createTestVellum({
    plugins: [
      articles({ retryBaseMs: 5 }),
      media({ decoders: 2, decodeTimeoutMs: 20_000, ...options }),
      health(quotaGb === undefined ? {} : { storageQuotaBytes: quotaGb * 1024 ** 3 }),
    ],
  });
  return t;
}

async function upload(bytes: Uint8Array, name = "upload.bin", type = "application/octet-stream"): Promise<Response> {
  const form = new FormData();
  form.append("title", "ignored");
  form.append("file", new Blob([new Uint8Array(bytes)], { type }), name);
  return t!.fetch("/api/v1/media", { method: "POST", body: form, headers: await t!.writeHeaders() });
}

async function errorCode(res: Response): Promise<string> {
  const body = (await res.json()) as { error: { code: string; request_id: string } };
  expect(body.error.request_id).toEqual(expect.any(String));
  return body.error.code;
}

/** The files of the media folder and of its work dir. */
async function mediaFiles(): Promise<{ stored: string[]; work: string[] }> {
  const dir = join(t!.dataDir, "media");
  const stored = (await readdir(dir)).filter((name) => name !== ".work");
  return { stored, work: await readdir(join(dir, ".work")) };
}

/** Serves the instance over real HTTP (closed after the test); its port. */
async function listen(): Promise<number> {
  server = createServer(t!.vellum.handler);
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

const BOUNDARY = "----vellum-test-boundary";
const PART_HEAD = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\n\r\n`;

/**
 * `POST /api/v1/media` over real HTTP announcing `length` bytes of multipart body, which the caller
 * writes to `req` piece by piece; `answer` is the status and body of the response.
 */
function rawUpload(port: number, headers: Record<string, string>, length: number) {
  const req = httpRequest({
    host: "127.0.0.1",
    port,
    method: "POST",
    path: "/api/v1/media",
    headers: {
      ...headers,
      "content-type": `multipart/form-data; boundary=${BOUNDARY}`,
      "content-length": String(length),
    },
  });
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req.on("error", reject);
    req.on("response", (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
  });
  return { req, answer };
}

const png = (width: number, height: number, color = "#3366cc") =>
  sharp({ create: { width, height, channels: 3, background: color } })
    .png()
    .toBuffer();

/** A JPEG 300×200 whose EXIF says "rotate 90°" (orientation 6) and carries a GPS position. */
const jpegWithGps = () =>
  sharp({ create: { width: 300, height: 200, channels: 3, background: "#aa3311" } })
    .jpeg()
    .withMetadata({ orientation: 6 })
    .withExifMerge({ IFD0: { Make: "Vellum" }, IFD3: { GPSLatitudeRef: "N", GPSLatitude: "48/1 51/1 0/1" } })
    .toBuffer();

describe("media uploads", () => {
  it("stores a PNG as webp with the output's dimensions, and serves it with the contract's headers", async () => {
    await boot();
    const bytes = await png(640, 480);
    const res = await upload(bytes, "photo.gif", "image/gif");
    expect(res.status).toBe(201);
    const item = (await res.json()) as MediaItem;
    expect(item).toEqual({
      id: expect.stringMatching(/^[0-9A-Z]{26}$/),
      url: `/media/${item.id}.webp`,
      width: 640,
      height: 480,
      mime: "image/png",
      bytes: bytes.length,
      sha256: (await import("node:crypto")).createHash("sha256").update(bytes).digest("hex"),
    });
    const served = await t!.fetch(item.url);
    expect(served.status).toBe(200);
    expect(Object.fromEntries(served.headers)).toMatchObject({
      "content-type": "image/webp",
      "cache-control": "public, max-age=31536000, immutable",
      "x-content-type-options": "nosniff",
      etag: `"${item.id}.webp"`,
      "accept-ranges": "bytes",
    });
    const body = Buffer.from(await served.arrayBuffer());
    expect(Number(served.headers.get("content-length"))).toBe(body.length);
    expect(await sharp(body).metadata()).toMatchObject({ format: "webp", width: 640, height: 480 });
    expect(await mediaFiles()).toEqual({ stored: [`${item.id}.webp`], work: [] });

    // The storage accounting counts the media folder by the plugin's rows, not by walking it.
    const storage = (await (await t!.fetch("/health/storage")).json()) as { accounted: Record<string, number> };
    expect(storage.accounted).toEqual({ media: body.length });
    expect(await (await t!.fetch("/health/media")).json()).toMatchObject({ items: 1, stored_bytes: body.length });
  });

  it("answers the same bytes with the existing item (200), sequentially and at the same moment, one file each", async () => {
    await boot();
    const bytes = await png(320, 240);
    const first = await upload(bytes);
    expect(first.status).toBe(201);
    const again = await upload(bytes, "other-name.png", "image/png");
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(await first.json());

    const other = await png(321, 240, "#118844");
    const together = await Promise.all([upload(other), upload(other), upload(other)]);
    expect(together.map((res) => res.status).sort()).toEqual([200, 200, 201]);
    const items = (await Promise.all(together.map((res) => res.json()))) as MediaItem[];
    expect(new Set(items.map((item) => item.id)).size).toBe(1);
    expect((await mediaFiles()).stored).toHaveLength(2);
  });

  it("strips EXIF and GPS and applies the orientation", async () => {
    await boot();
    const jpeg = await jpegWithGps();
    expect(await sharp(jpeg).metadata()).toMatchObject({ orientation: 6, exif: expect.any(Buffer) });
    const item = (await (await upload(jpeg, "me.jpg", "image/jpeg")).json()) as MediaItem;
    expect(item).toMatchObject({ mime: "image/jpeg", width: 200, height: 300 });
    const served = Buffer.from(await (await t!.fetch(item.url)).arrayBuffer());
    const meta = await sharp(served).metadata();
    expect(meta).toMatchObject({ format: "webp", width: 200, height: 300 });
    expect(meta.exif).toBeUndefined();
    expect(meta.xmp).toBeUndefined();
    expect(meta.orientation).toBeUndefined();
    expect(served.includes(Buffer.from("Vellum"))).toBe(false);
  });

  it("serves ranges, HEAD and 304s without reading more than asked", async () => {
    await boot();
    const item = (await (await upload(await png(200, 200))).json()) as MediaItem;
    const whole = Buffer.from(await (await t!.fetch(item.url)).arrayBuffer());

    const part = await t!.fetch(item.url, { headers: { range: "bytes=0-9" } });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe(`bytes 0-9/${whole.length}`);
    expect(Buffer.from(await part.arrayBuffer())).toEqual(whole.subarray(0, 10));
    const tail = await t!.fetch(item.url, { headers: { range: "bytes=-5" } });
    expect(Buffer.from(await tail.arrayBuffer())).toEqual(whole.subarray(-5));
    const open = await t!.fetch(item.url, { headers: { range: `bytes=${whole.length - 3}-` } });
    expect(open.headers.get("content-length")).toBe("3");
    // Outside the file or several ranges: the whole file, as RFC 9110 allows.
    for (const range of [`bytes=${whole.length}-`, "bytes=0-1,4-5", "items=0-1"]) {
      const res = await t!.fetch(item.url, { headers: { range } });
      expect(res.status).toBe(200);
      expect(Buffer.from(await res.arrayBuffer())).toEqual(whole);
    }

    const head = await t!.fetch(item.url, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe(String(whole.length));
    expect((await head.arrayBuffer()).byteLength).toBe(0);
    const cached = await t!.fetch(item.url, { headers: { "if-none-match": `"${item.id}.webp"` } });
    expect(cached.status).toBe(304);
    for (const path of ["/media/nothing.webp", `/media/${item.id}.png`, "/media/..%2Fdb%2Fvellum.sqlite"]) {
      const res = await t!.fetch(path);
      expect(res.status).toBe(404);
      expect(await errorCode(res)).toBe("not_found");
    }
  });

  it("keeps a PDF as PDF only when allowed, and serves it as an attachment in a sandbox", async () => {
    const pdf = Buffer.from("%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n");
    await boot();
    expect(await errorCode(await upload(pdf, "doc.pdf", "application/pdf"))).toBe("unsupported_media_type");
    await t!.close();
    await boot({ allowPdf: true });
    const res = await upload(pdf, "doc.pdf", "application/pdf");
    expect(res.status).toBe(201);
    const item = (await res.json()) as MediaItem;
    expect(item).toMatchObject({ url: `/media/${item.id}.pdf`, mime: "application/pdf", width: null, height: null });
    const served = await t!.fetch(item.url);
    expect(Object.fromEntries(served.headers)).toMatchObject({
      "content-type": "application/pdf",
      "content-disposition": "attachment",
      "content-security-policy": "sandbox",
    });
    expect(Buffer.from(await served.arrayBuffer())).toEqual(pdf);
  });
});

describe("media: hostile uploads", () => {
  it("gives each bad upload its contract code, leaves nothing half-written, and keeps serving", async () => {
    await boot({ maxFramePixels: 50_000_000, maxTotalPixels: 500_000_000 });
    const good = await png(64, 64);
    const jpeg = await sharp(good).jpeg().toBuffer();
    // A PNG followed by a zip archive: a PNG to the sniffer, re-encoded, so nothing of the zip is served.
    const polyglot = Buffer.concat([good, Buffer.from("PK\x03\x04\x14\x00"), Buffer.alloc(64, 1)]);
    const cases: Array<[string, Uint8Array, string, number]> = [
      ["zero bytes", new Uint8Array(0), "unsupported_media_type", 415],
      [
        "an executable renamed .png",
        Buffer.concat([Buffer.from("MZ\x90\x00\x03"), Buffer.alloc(200)]),
        "unsupported_media_type",
        415,
      ],
      [
        "a zip archive renamed .jpg",
        Buffer.concat([Buffer.from("PK\x03\x04\x14\x00"), Buffer.alloc(200)]),
        "unsupported_media_type",
        415,
      ],
      ["plain text", Buffer.from("just some text, no image"), "unsupported_media_type", 415],
      ["a truncated JPEG", jpeg.subarray(0, Math.floor(jpeg.length / 2)), "invalid_media", 422],
      ["a PNG with a broken CRC", withBrokenCrc(good), "invalid_media", 422],
      ["a 50,000×50,000 PNG bomb", grayPng(50_000, 50_000, 64), "invalid_media", 422],
      ["a GIF of 3,000 frames of 1000×1000", manyFrameGif(3000, 1000, 1000), "invalid_media", 422],
      [
        "an SVG with a script",
        Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>'),
        "invalid_media",
        422,
      ],
      [
        "an SVG with a file:// image",
        Buffer.from(
          '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="10" height="10"><image xlink:href="file:///etc/passwd" width="10" height="10"/></svg>',
        ),
        "invalid_media",
        422,
      ],
      [
        "an SVG with an external image",
        Buffer.from(
          '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><image href="http://127.0.0.1:9/x.png" width="10" height="10"/></svg>',
        ),
        "invalid_media",
        422,
      ],
      [
        "an SVG with entity expansion",
        Buffer.from(
          '<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><text>&b;</text></svg>',
        ),
        "invalid_media",
        422,
      ],
      ["an SVG that is not SVG", Buffer.from("<svg><unclosed"), "invalid_media", 422],
    ];
    for (const [name, bytes, code, status] of cases) {
      const res = await upload(bytes, "evil.png", "image/png");
      expect({ name, status: res.status, code: await errorCode(res) }).toEqual({ name, status, code });
    }
    expect(await mediaFiles()).toEqual({ stored: [], work: [] });
    const mixed = await upload(polyglot, "archive.zip", "application/zip");
    expect(mixed.status).toBe(201);
    const served = Buffer.from(await (await t!.fetch(((await mixed.json()) as MediaItem).url)).arrayBuffer());
    expect(await sharp(served).metadata()).toMatchObject({ format: "webp", width: 64, height: 64 });
    expect(served.includes(Buffer.from("PK\x03\x04"))).toBe(false);
    const safeSvg = Buffer.from(
      '<svg xmlns="http://www.w3.org/2000/svg" width="30" height="20"><rect width="30" height="20" fill="red"/></svg>',
    );
    const svg = await upload(safeSvg, "logo.svg", "image/svg+xml");
    expect(svg.status).toBe(201);
    expect(await svg.json()).toMatchObject({ mime: "image/svg+xml", width: 30, height: 20 });
    expect((await t!.fetch("/health")).status).toBe(200);
  });

  it("refuses a request without a file part (400) and a body that is not multipart (415)", async () => {
    await boot();
    const form = new FormData();
    form.append("title", "no file here");
    const missing = await t!.fetch("/api/v1/media", { method: "POST", body: form, headers: await t!.writeHeaders() });
    expect(missing.status).toBe(400);
    expect(await errorCode(missing)).toBe("validation_failed");
    const json = await t!.fetch("/api/v1/media", {
      method: "POST",
      json: { file: "x" },
      headers: await t!.writeHeaders(),
    });
    expect(await errorCode(json)).toBe("unsupported_media_type");
    expect((await t!.fetch("/api/v1/media", { method: "POST", body: new FormData() })).status).toBe(401);
  });

  it("cuts an upload over MEDIA_MAX_UPLOAD_MB with 413, and one reaching the quota mid-upload with 507, leaving no file", async () => {
    await boot({ maxUploadBytes: 64 * 1024 });
    const big = Buffer.alloc(200 * 1024, 7);
    const res = await upload(big);
    expect(res.status).toBe(413);
    expect(await errorCode(res)).toBe("payload_too_large");
    expect(await mediaFiles()).toEqual({ stored: [], work: [] });
    await t!.close();
    // A quota that leaves about 256 KB over what a fresh data dir uses: a 1 MB upload reaches it midway.
    await boot();
    const used = ((await (await t!.fetch("/health/storage")).json()) as { used_bytes: number }).used_bytes;
    await t!.close();
    await boot({}, (used + 256 * 1024) / 1024 ** 3);
    const over = await upload(Buffer.alloc(1024 * 1024, 7));
    expect(over.status).toBe(507);
    expect(await errorCode(over)).toBe("storage_quota_exceeded");
    expect(await mediaFiles()).toEqual({ stored: [], work: [] });
    // What still fits is taken.
    expect((await upload(await png(10, 10))).status).toBe(201);
  });

  it("refuses with 507, under the write lock of its row, the one of two uploads side by side that no longer fits", async () => {
    // Each PDF (stored as uploaded) fits in what the quota leaves, the two together do not. Both are
    // held mid-body until both passed the check made before a body is received; before, that check
    // was the only one, and both were stored.
    await boot({ allowPdf: true });
    const used = ((await (await t!.fetch("/health/storage")).json()) as { used_bytes: number }).used_bytes;
    await t!.close();
    await boot({ allowPdf: true }, (used + 1024 * 1024) / 1024 ** 3);
    const port = await listen();
    const headers = await t!.writeHeaders();
    const tail = `\r\n--${BOUNDARY}--\r\n`;
    const uploads = [1, 2].map(() => {
      const pdf = Buffer.concat([Buffer.from("%PDF-1.4\n"), randomBytes(600 * 1024)]);
      const sending = rawUpload(port, headers, PART_HEAD.length + pdf.length + tail.length);
      sending.req.write(PART_HEAD);
      sending.req.write(pdf.subarray(0, 1024));
      return { ...sending, pdf };
    });
    await waitFor(async () => (await mediaFiles()).work.length === 2, "both uploads being received");
    for (const { req, pdf } of uploads) req.end(Buffer.concat([pdf.subarray(1024), Buffer.from(tail)]));
    const answers = await Promise.all(uploads.map((sending) => sending.answer));
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 507]);
    const refused = JSON.parse(answers.find((answer) => answer.status === 507)!.body) as { error: { code: string } };
    expect(refused.error.code).toBe("storage_quota_exceeded");
    const files = await mediaFiles();
    expect(files.work).toEqual([]);
    expect(files.stored).toHaveLength(1);
    const storage = (await (await t!.fetch("/health/storage")).json()) as {
      used_bytes: number;
      quota_bytes: number;
      accounted: Record<string, number>;
    };
    expect(storage.accounted).toEqual({ media: uploads[0]!.pdf.length });
    expect(storage.used_bytes).toBeLessThanOrEqual(storage.quota_bytes);
  });

  it("leaves no temporary file when the client goes away mid-upload, and keeps serving", async () => {
    await boot();
    const { req, answer } = rawUpload(await listen(), await t!.writeHeaders(), 10 * 1024 * 1024);
    answer.catch(() => undefined);
    req.write(PART_HEAD);
    req.write(Buffer.alloc(256 * 1024, 1));
    await waitFor(async () => (await mediaFiles()).work.length === 1, "the upload's temporary file");
    req.destroy();
    await waitFor(async () => (await mediaFiles()).work.length === 0, "the temporary file removed");
    expect((await t!.fetch("/health/live")).status).toBe(200);
  });
});

describe("media: orphans", () => {
  it("removes only items older than a day that no article refers to, and reports what it freed", async () => {
    await boot();
    const [kept, orphan, fresh] = await Promise.all(
      ["#010101", "#020202", "#030303"].map(
        async (color) => (await (await upload(await png(50, 50, color))).json()) as MediaItem,
      ),
    );
    const res = await t!.fetch(ARTICLES, {
      method: "POST",
      json: { title: "Uses a picture", slug: "with-picture", content: `<p><img src="${kept!.url}"></p>`, tags: [] },
      headers: await t!.writeHeaders(),
    });
    expect(res.status).toBe(202);
    await waitFor(async () => (await t!.fetch(`${ARTICLES}/with-picture`)).status === 200, "the article");
    const old = new Date(Date.now() - 25 * 3_600_000).toISOString();
    await t!.vellum
      .db()
      .updateTable("media_items")
      .set({ created_at: old })
      .where("id", "in", [kept!.id, orphan!.id])
      .execute();

    const cleanup = await t!.fetch("/api/v1/admin/cleanup-orphans", {
      method: "POST",
      headers: await t!.writeHeaders(),
    });
    expect(cleanup.status).toBe(200);
    const stored = (await mediaFiles()).stored.sort();
    const orphanBytes = (
      await sharp(await png(50, 50, "#020202"))
        .webp()
        .toBuffer()
    ).length;
    expect(await cleanup.json()).toEqual({ removed: 1, bytes_freed: expect.any(Number) });
    expect(orphanBytes).toBeGreaterThan(0);
    expect(stored).toEqual([`${kept!.id}.webp`, `${fresh!.id}.webp`].sort());
    expect((await t!.fetch(orphan!.url)).status).toBe(404);
    expect((await t!.fetch(kept!.url)).status).toBe(200);
    expect((await t!.fetch("/api/v1/admin/cleanup-orphans", { method: "POST" })).status).toBe(401);
  });
});
