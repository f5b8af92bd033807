import { createDecipheriv, createHash, createHmac, hkdfSync } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { argon2id, hash } from "argon2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createVpbkWriter,
  DEFAULT_KDF,
  openVpbk,
  parseHeader,
  readVpbkTrailer,
  verifyVpbk,
  type VpbkRecord,
  type VpbkWriteSummary,
} from "../src/index.js";
import {
  bytes,
  chunked,
  CREATED_MS,
  kek,
  minimalBody,
  PASSPHRASE,
  sha256,
  TEST_KDF,
  unlock,
  writeArchive,
} from "./support.js";

const MARKER = Buffer.from("PLAINTEXT-MARKER-7f3a9c-never-on-disk");
const DB = Buffer.concat([Buffer.from("SQLite format 3\0"), bytes(20_000, 1), MARKER]);
const PHOTO = Buffer.concat([MARKER, bytes(100_000, 2)]);
const BIG = bytes(200_000, 3);
const SITE = Buffer.from(JSON.stringify({ title: "Vellum", marker: MARKER.toString() }));

interface Entry {
  type: string;
  path: string;
  content?: Buffer;
  mode?: number;
  mtimeMs?: number;
}

/** The sample generation: dirs, files (empty, > 64 KiB, streamed in odd chunks) and the DB. */
const SAMPLE: Entry[] = [
  { type: "dir", path: "db" },
  { type: "sqlite-db", path: "db/vellum.sqlite", content: DB, mtimeMs: CREATED_MS - 5 },
  { type: "dir", path: "media" },
  { type: "dir", path: "media/2026" },
  { type: "file", path: "media/2026/a-b.jpg", content: PHOTO, mode: 0o644, mtimeMs: 1_700_000_000_123 },
  { type: "dir", path: "media/2026/ab" },
  { type: "file", path: "media/2026/ab-c.txt", content: Buffer.from("sorts between ab and ab/…") },
  { type: "file", path: "media/2026/ab/big.bin", content: BIG },
  { type: "file", path: "media/2026/ab/empty.txt", content: Buffer.alloc(0) },
  { type: "file", path: "media/2026/ab/ünïcode—名前.txt", content: Buffer.from("nfc name") },
  { type: "dir", path: "settings" },
  { type: "file", path: "settings/site.json", content: SITE, mtimeMs: -1000 },
];

async function* oddChunks(data: Buffer): AsyncGenerator<Uint8Array> {
  const sizes = [1, 7, 65_535, 3, 65_536, 100_000];
  let at = 0;
  for (let i = 0; at < data.length; i += 1) {
    const n = sizes[i % sizes.length] as number;
    yield new Uint8Array(data.subarray(at, at + n));
    at += n;
  }
}

async function writeSample(): Promise<{ archive: Buffer; summary: VpbkWriteSummary; dataKey: Buffer }> {
  const { archive, summary, writer } = await writeArchive(
    async (w) => {
      for (const e of SAMPLE) {
        const meta = { mode: e.mode, mtimeMs: e.mtimeMs };
        if (e.type === "dir") await w.dir(e.path, meta);
        else if (e.type === "sqlite-db") await w.sqliteDb(e.content as Buffer, meta);
        else if (e.path.endsWith("big.bin")) {
          await w.file(e.path, oddChunks(e.content as Buffer), { ...meta, size: (e.content as Buffer).length });
        } else await w.file(e.path, e.content as Buffer, meta);
      }
    },
    { end: { skipped: [{ path: "media/link", reason: "symlink" }], walkStartMs: CREATED_MS } },
  );
  return { archive, summary, dataKey: Buffer.from(writer.dataKey) };
}

async function readBack(records: AsyncIterable<VpbkRecord>): Promise<{ entries: Entry[]; others: VpbkRecord[] }> {
  const entries: Entry[] = [];
  const others: VpbkRecord[] = [];
  for await (const r of records) {
    if (r.type === "dir") entries.push({ type: "dir", path: r.path, mode: r.mode, mtimeMs: r.mtimeMs });
    else if (r.type === "file" || r.type === "sqlite-db") {
      const parts: Buffer[] = [];
      for await (const chunk of r.content) parts.push(chunk);
      entries.push({ type: r.type, path: r.path, content: Buffer.concat(parts), mode: r.mode, mtimeMs: r.mtimeMs });
    } else others.push(r);
  }
  return { entries, others };
}

let sample: { archive: Buffer; summary: VpbkWriteSummary; dataKey: Buffer };
let dir: string;

beforeAll(async () => {
  sample = await writeSample();
  dir = await mkdtemp(join(tmpdir(), "vpbk-test-"));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe(".vpbk round trip", () => {
  it("restores every record byte for byte, and both sides agree on the content root", async () => {
    const archive = await openVpbk(sample.archive, unlock());
    expect(archive.header).toMatchObject({ createdMs: CREATED_MS, version: 1, kdf: TEST_KDF });
    expect(archive.header.generationId).toBe(sample.summary.generationId);
    expect(archive.unlockedWith).toBe("passphrase");
    const { entries, others } = await readBack(archive.records);

    expect(entries.map((e) => [e.type, e.path])).toEqual(SAMPLE.map((e) => [e.type, e.path]));
    for (const [i, e] of SAMPLE.entries()) {
      const got = entries[i] as Entry;
      if (e.content) expect(got.content?.equals(e.content), e.path).toBe(true);
      expect(got.mode).toBe(e.mode ?? (e.type === "dir" ? 0o700 : 0o600));
      expect(got.mtimeMs).toBe(e.mtimeMs ?? 0);
    }
    const [manifest, end] = others;
    expect(manifest).toMatchObject({
      type: "manifest",
      index: 0,
      manifest: { format: "vellum-backup", formatVersion: 1, app: { name: "vellum" }, host: "test" },
    });
    const fileBytes = SAMPLE.reduce((sum, e) => sum + (e.content?.length ?? 0), 0);
    expect(end).toMatchObject({
      type: "end",
      end: { entries: SAMPLE.length, fileBytes, skipped: [{ path: "media/link", reason: "symlink" }] },
    });

    expect(archive.summary).toEqual({
      generationId: sample.summary.generationId,
      createdMs: CREATED_MS,
      sealedMs: CREATED_MS + 1500,
      dataFrames: sample.summary.dataFrames,
      dataBytes: sample.summary.dataBytes,
      archiveBytes: sample.archive.length,
      entries: SAMPLE.length,
      fileBytes,
      contentRoot: sample.summary.contentRoot,
      unlockedWith: "passphrase",
    });
    expect(sample.summary).toMatchObject({ entries: SAMPLE.length, fileBytes, archiveBytes: sample.archive.length });
  });

  it("frames canonically: 64 KiB DATA frames, one short last one, a 96-byte FINAL; 32 bytes per frame", () => {
    const { dataFrames, dataBytes } = sample.summary;
    expect(dataFrames).toBe(Math.ceil(dataBytes / 65_536));
    expect(dataFrames).toBeGreaterThanOrEqual(5);
    expect(sample.archive.length).toBe(188 + dataBytes + 32 * dataFrames + 96);
  });

  it("keeps no plaintext in the archive: the marker, names and the JSON are not there", () => {
    for (const needle of [MARKER, Buffer.from("media/2026"), Buffer.from("vellum-backup"), Buffer.from("SQLite")]) {
      expect(sample.archive.includes(needle), needle.toString()).toBe(false);
    }
  });

  it("verifies from a file, from bytes and from a stream of chunks, with the same summary", async () => {
    const file = join(dir, "vk-20260115-103000.vpbk");
    await writeFile(file, sample.archive);
    const progress: number[] = [];
    const fromFile = await verifyVpbk(file, { ...unlock(), onProgress: (n) => progress.push(n) });
    expect(fromFile.contentRoot).toBe(sample.summary.contentRoot);
    expect(progress.at(-1)).toBe(sample.archive.length);
    expect(await verifyVpbk(sample.archive, unlock())).toEqual(fromFile);
    expect(await verifyVpbk(chunked(sample.archive, 1000), unlock())).toEqual(fromFile);
    expect(await verifyVpbk(Readable.from(chunked(sample.archive, 77_777)), unlock())).toEqual(fromFile);
  });

  it("opens with the previous passphrase after a rotation, and with the writer's data key without a KDF", async () => {
    const rotated = await openVpbk(sample.archive, {
      passphrase: "the new passphrase, 2026",
      previousPassphrase: PASSPHRASE,
      deriveKek: kek,
    });
    expect(rotated.unlockedWith).toBe("previousPassphrase");
    await rotated.close();
    const before = kek.calls;
    const summary = await verifyVpbk(sample.archive, { dataKey: sample.dataKey });
    expect(summary).toMatchObject({ unlockedWith: "dataKey", contentRoot: sample.summary.contentRoot });
    expect(kek.calls).toBe(before);
    await expect(verifyVpbk(sample.archive, { dataKey: bytes(32, 1) })).rejects.toMatchObject({ code: "E_HEADER_MAC" });
  });

  it("reports a missing file as E_IO (exit 4) and overlapping writer calls as E_USAGE", async () => {
    const missing = await verifyVpbk(join(dir, "missing.vpbk"), unlock()).catch((error: unknown) => error);
    expect(missing).toMatchObject({ code: "E_IO", exitCode: 4 });
    await writeArchive(async (w) => {
      await w.dir("db");
      const first = w.sqliteDb(bytes(200_000, 1));
      await expect(w.dir("media")).rejects.toMatchObject({ code: "E_USAGE" });
      await first;
    });
  });

  it("reads the FINAL frame in O(1) from the tail: seal time, counts and content root", async () => {
    const file = join(dir, "tail.vpbk");
    await writeFile(file, sample.archive);
    const { header, trailer } = await readVpbkTrailer(file, unlock());
    expect(header.generationId).toBe(sample.summary.generationId);
    expect(trailer).toMatchObject({
      sealedMs: CREATED_MS + 1500,
      dataFrames: sample.summary.dataFrames,
      dataBytes: sample.summary.dataBytes,
    });
    expect(trailer.contentRoot.toString("hex")).toBe(sample.summary.contentRoot);
    const cut = join(dir, "cut.vpbk");
    await writeFile(cut, sample.archive.subarray(0, sample.archive.length - 1));
    await expect(readVpbkTrailer(cut, unlock())).rejects.toMatchObject({ code: "E_NO_FINAL" });
  });

  it("lets content be skipped: it is still read and checked", async () => {
    const archive = await openVpbk(sample.archive, unlock());
    const seen: string[] = [];
    for await (const r of archive.records) {
      seen.push(r.type);
      if (r.type === "file") {
        for await (const _chunk of r.content) break;
      }
    }
    expect(seen.at(-1)).toBe("end");
    expect(archive.summary?.contentRoot).toBe(sample.summary.contentRoot);
  });

  it("uses the default KDF parameters (64 MiB, t = 3, p = 4) unless told otherwise", async () => {
    const writer = await createVpbkWriter({ passphrase: PASSPHRASE, createdMs: CREATED_MS, manifest: {} });
    expect(writer.header.kdf).toEqual(DEFAULT_KDF);
    expect(DEFAULT_KDF).toEqual({ memoryKiB: 65_536, timeCost: 3, parallelism: 4 });
    const failed = new Promise((resolve) => writer.readable.on("error", resolve));
    writer.abort();
    expect(await failed).toMatchObject({ code: "E_USAGE" });
    await expect(writer.dir("db")).rejects.toMatchObject({ code: "E_USAGE" });
  });

  it("matches the spec byte for byte: an independent reader built from §2.2–§2.4 opens it", async () => {
    const a = sample.archive;
    const h = a.subarray(0, 188);
    expect(h.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x56, 0x50, 0x42, 0x4b, 0x0d, 0x0a, 0x1a]));
    expect([h.readUInt16BE(8), h.readUInt16BE(10), h.readUInt32BE(12), h[16], h[17], h.readUInt32BE(88)]).toEqual([
      1, 0, 188, 1, 1, 65_536,
    ]);
    expect(Number(h.readBigUInt64BE(64))).toBe(CREATED_MS);
    const kekBytes = await hash(Buffer.from(PASSPHRASE, "utf8"), {
      type: argon2id,
      memoryCost: h.readUInt32BE(20),
      timeCost: h.readUInt32BE(24),
      parallelism: h.readUInt32BE(28),
      salt: h.subarray(32, 48),
      raw: true,
      hashLength: 32,
      version: 0x13,
    });
    const unwrap = createDecipheriv("aes-256-gcm", kekBytes, h.subarray(96, 108), { authTagLength: 16 });
    unwrap.setAAD(h.subarray(0, 96));
    unwrap.setAuthTag(h.subarray(140, 156));
    const dk = Buffer.concat([unwrap.update(h.subarray(108, 140)), unwrap.final()]);
    expect(dk.equals(sample.dataKey)).toBe(true);
    const kHdr = Buffer.from(hkdfSync("sha256", dk, h.subarray(48, 64), "vpbk1 header", 32));
    const kPay = Buffer.from(hkdfSync("sha256", dk, h.subarray(48, 64), "vpbk1 payload", 32));
    expect(createHmac("sha256", kHdr).update(h.subarray(0, 156)).digest()).toEqual(h.subarray(156, 188));
    const H = createHash("sha256").update(h).digest();

    let offset = 188;
    let prevTag = Buffer.alloc(16);
    const plain: Buffer[] = [];
    for (let seq = 0; ; seq += 1) {
      const fh = a.subarray(offset, offset + 16);
      const len = fh.readUInt32BE(0);
      const final = fh[4] === 0x02;
      expect(Number(fh.readBigUInt64BE(8))).toBe(seq);
      const nonce = Buffer.alloc(12);
      nonce.writeBigUInt64BE(BigInt(seq), 3);
      nonce[11] = final ? 1 : 0;
      const d = createDecipheriv("aes-256-gcm", kPay, nonce, { authTagLength: 16 });
      d.setAAD(Buffer.concat([Buffer.from("vpbk1 frame"), H, fh, prevTag]));
      const tag = a.subarray(offset + 16 + len, offset + 32 + len);
      d.setAuthTag(tag);
      const pt = Buffer.concat([d.update(a.subarray(offset + 16, offset + 16 + len)), d.final()]);
      prevTag = Buffer.from(tag);
      offset += 32 + len;
      if (!final) {
        plain.push(pt);
        continue;
      }
      expect(pt.subarray(0, 8).toString()).toBe("VPBK-END");
      expect(Number(pt.readBigUInt64BE(8))).toBe(seq);
      expect(Number(pt.readBigUInt64BE(24))).toBe(CREATED_MS + 1500);
      expect(pt.subarray(32).toString("hex")).toBe(sample.summary.contentRoot);
      break;
    }
    expect(offset).toBe(a.length);
    const stream = Buffer.concat(plain);
    expect(stream[0]).toBe(0x01);
    const manifestSize = Number(stream.readBigUInt64BE(16));
    const manifestJson = stream.subarray(24, 24 + manifestSize);
    expect(JSON.parse(manifestJson.toString())).toMatchObject({ format: "vellum-backup", formatVersion: 1 });
    expect(stream.subarray(24 + manifestSize, 56 + manifestSize)).toEqual(sha256(manifestJson));
    expect(parseHeader(h).generationId).toBe(h.subarray(72, 88).toString("hex"));
  });

  it("streams: memory stays flat while 48 MiB go through the writer and the reader", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const size = 48 * 1024 * 1024;
    const writer = await createVpbkWriter({
      passphrase: PASSPHRASE,
      createdMs: CREATED_MS,
      manifest: {},
      kdf: TEST_KDF,
      deriveKek: kek,
    });
    const block = bytes(1024 * 1024, 9);
    let peak = 0;
    let buffered = 0;
    const measure = async () => {
      // Twice, with a turn between: array buffers are freed by a sweeper after the collection.
      gc();
      await new Promise(setImmediate);
      gc();
      const { arrayBuffers, heapUsed } = process.memoryUsage();
      peak = Math.max(peak, arrayBuffers + heapUsed);
    };
    gc();
    const baseline = process.memoryUsage().arrayBuffers + process.memoryUsage().heapUsed;
    const fill = (async () => {
      await minimalBody(writer);
      await writer.dir("settings");
      await writer.file(
        "settings/huge.bin",
        (async function* () {
          for (let i = 0; i < size / block.length; i += 1) {
            buffered = Math.max(buffered, writer.readable.readableLength);
            if (i % 8 === 0) await measure();
            yield block;
          }
        })(),
        { size },
      );
      await writer.end({ sealedMs: CREATED_MS + 10 });
    })();
    // The reader consumes the writer's output as it comes: nothing holds the whole archive.
    const archive = await openVpbk(writer.readable, unlock());
    let seen = 0;
    for await (const r of archive.records) {
      if (r.type !== "file") continue;
      for await (const chunk of r.content) {
        seen += chunk.length;
        if (seen % (8 * 1024 * 1024) < chunk.length) await measure();
      }
    }
    await fill;
    expect(seen).toBe(size);
    expect(archive.summary?.fileBytes).toBe(size + 4096);
    expect(buffered).toBeLessThanOrEqual(4 * 65_568 + 65_568);
    expect(peak - baseline).toBeLessThan(16 * 1024 * 1024);
  });
});
