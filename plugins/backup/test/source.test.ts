import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HEADER_BYTES, openSource } from "../src/index.js";
import { bytes, collector } from "./support.js";

/** Reads `path` as the reader does: the header first, then pieces of a frame and its tag. */
async function readAs(path: string, first: number, piece: number): Promise<Buffer> {
  const source = await openSource(path);
  try {
    const parts: Buffer[] = [];
    let size = first;
    for (;;) {
      const part = Buffer.alloc(size);
      const got = await source.read(part, 0, size);
      parts.push(part.subarray(0, got));
      if (got < size) return Buffer.concat(parts);
      size = piece;
    }
  } finally {
    await source.close();
  }
}

describe("an archive file read as a source", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "vellum-source-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it.each([0, 100, HEADER_BYTES, HEADER_BYTES + 1, 256 * 1024 + HEADER_BYTES, 1024 * 1024 + 13])(
    "yields every byte of a %i-byte file, in order, after a header-sized first read",
    async (size) => {
      const content = bytes(size, size);
      const path = join(dir, `f${size}`);
      await writeFile(path, content);
      expect((await readAs(path, HEADER_BYTES, 65_552)).equals(content)).toBe(true);
      expect((await readAs(path, HEADER_BYTES, 7)).equals(content)).toBe(true);
    },
  );

  it("holds no read-ahead buffer until the read after the header (Argon2id runs in between)", async () => {
    const gc = collector();
    const path = join(dir, "archive");
    await writeFile(path, bytes(2 * 1024 * 1024, 9));
    gc();
    const before = process.memoryUsage().arrayBuffers;
    const source = await openSource(path);
    try {
      const header = Buffer.alloc(HEADER_BYTES);
      expect(await source.read(header, 0, HEADER_BYTES)).toBe(HEADER_BYTES);
      gc();
      expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(64 * 1024);
      const frame = Buffer.alloc(65_552);
      expect(await source.read(frame, 0, frame.length)).toBe(frame.length);
      expect(process.memoryUsage().arrayBuffers - before).toBeGreaterThanOrEqual(2 * 256 * 1024);
    } finally {
      await source.close();
    }
  });
});
