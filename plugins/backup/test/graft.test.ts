import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createHeader,
  FrameSealer,
  HEADER_BYTES,
  openSource,
  parseHeader,
  readFrames,
  restoreGeneration,
  type RestoreStep,
  unlockHeader,
  type VpbkKeys,
  VpbkError,
} from "../src/index.js";
import {
  bytes,
  chunked,
  collector,
  CREATED_MS,
  kek,
  minimalBody,
  outcome,
  PASSPHRASE,
  rawGeneration,
  smallGeneration,
  TEST_KDF,
  unlock,
  writeArchive,
} from "./support.js";

// backup-format.md §5 test 13 (a shorter generation's FINAL frame grafted after frame k of a
// longer one) and test 16 (a frame length of 0xFFFFFFFF or 65537: E_LEN before any allocation,
// memory within 2 × 64 KiB of the baseline).

const FRAME = 65_568; // a full DATA frame: 16-byte header, 64 KiB, 16-byte tag

/** The frames after the header, cut by their cleartext lengths. */
function framesOf(archive: Buffer): Buffer[] {
  const frames: Buffer[] = [];
  for (let at = HEADER_BYTES; at < archive.length;) {
    const length = 32 + archive.readUInt32BE(at);
    frames.push(archive.subarray(at, at + length));
    at += length;
  }
  return frames;
}

/** A copy of `frame` with its seq field set to `seq`. */
function withSeq(frame: Buffer, seq: number): Buffer {
  const copy = Buffer.from(frame);
  copy.writeBigUInt64BE(BigInt(seq), 8);
  return copy;
}

/** Read as a stream of unknown size, so only the frame layer can find the fault. */
function streamed(archive: Buffer) {
  return outcome(chunked(archive, 10_000));
}

let short: Buffer; // header + 2 DATA + FINAL
let long: Buffer; // header + 5 DATA + FINAL, another generation under the same passphrase
let root: string;

beforeAll(async () => {
  short = (await smallGeneration()).archive;
  long = (await writeArchive((w) => minimalBody(w, 300_000))).archive;
  root = await mkdtemp(join(tmpdir(), "vellum-graft-"));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("a shorter generation's FINAL frame grafted after frame k of a longer one (§5 test 13)", () => {
  it("is E_FRAME_AUTH at the grafted frame, after every DATA frame k", async () => {
    const longFrames = framesOf(long);
    const shortFinal = framesOf(short).at(-1) as Buffer;
    expect(longFrames.map((f) => f[4])).toEqual([1, 1, 1, 1, 1, 2]);
    expect(shortFinal.readBigUInt64BE(8)).toBe(2n);
    for (let k = 0; k < longFrames.length - 1; k += 1) {
      const grafted = Buffer.concat([long.subarray(0, HEADER_BYTES), ...longFrames.slice(0, k + 1), shortFinal]);
      // Its seq field says 2: only right after frame 1; elsewhere the position check catches it.
      expect(await streamed(grafted), `k ${k}`).toMatchObject({
        ok: false,
        code: k === 1 ? "E_FRAME_AUTH" : "E_SEQ",
        index: k + 1,
      });
      // With seq rewritten to fit, the nonce, the DK and the tag chain still reject it.
      const renumbered = Buffer.concat([
        long.subarray(0, HEADER_BYTES),
        ...longFrames.slice(0, k + 1),
        withSeq(shortFinal, k + 1),
      ]);
      const result = await streamed(renumbered);
      expect(result, `k ${k}`).toMatchObject({ ok: false, code: "E_FRAME_AUTH", index: k + 1 });
      const graftedAt = HEADER_BYTES + longFrames.slice(0, k + 1).reduce((sum, f) => sum + f.length, 0);
      if (!result.ok) expect(result.offset).toBe(graftedAt);
    }
  });

  it("after the last DATA frame, is refused by restore (exit 1) once every file is staged; dest is untouched", async () => {
    // In place of the longer generation's own FINAL frame: the file keeps its size, so every
    // record fits and is written into staging before the FINAL frame is reached.
    const longFrames = framesOf(long);
    const shortFinal = framesOf(short).at(-1) as Buffer;
    const grafted = Buffer.concat([long.subarray(0, HEADER_BYTES), ...longFrames.slice(0, 5), withSeq(shortFinal, 5)]);
    expect(grafted.length).toBe(long.length);
    const dir = await mkdtemp(join(root, "restore-"));
    const file = join(dir, "grafted.vpbk");
    await writeFile(file, grafted);
    await mkdir(join(dir, "data", "media"), { recursive: true });
    await writeFile(join(dir, "data", "media", "live.txt"), "live");
    const steps: RestoreStep[] = [];
    const error = await restoreGeneration({
      file,
      dest: join(dir, "data"),
      passphrase: PASSPHRASE,
      deriveKek: kek,
      onStep: (step) => steps.push(step),
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(VpbkError);
    expect(error).toMatchObject({ code: "E_FRAME_AUTH", index: 5, exitCode: 1 });
    expect(steps.filter((step) => step === "record")).toHaveLength(2); // db and db/vellum.sqlite
    expect(steps).not.toContain("complete");
    expect((await readdir(dir)).sort()).toEqual(["data", "grafted.vpbk"]);
    expect(await readdir(join(dir, "data"))).toEqual(["media"]);
    expect(await readFile(join(dir, "data", "media", "live.txt"), "utf8")).toBe("live");
  });

  it("is rejected by the tag chain alone when both streams share a header and DK (a writer that reused a DK)", async () => {
    const { header, keys } = await createHeader({
      passphrase: PASSPHRASE,
      createdMs: CREATED_MS,
      kdf: TEST_KDF,
      deriveKek: kek,
    });
    const seal = (plaintext: Buffer) => {
      const sealer = new FrameSealer(keys);
      return [
        ...sealer.write(plaintext),
        ...sealer.finish({ sealedMs: CREATED_MS + 1, contentRoot: Buffer.alloc(32) }),
      ];
    };
    const longPlain = Buffer.concat(rawGeneration([], { db: bytes(300_000, 8) }));
    const longSealed = seal(longPlain);
    const archive = (frames: Buffer[]) => Buffer.concat([header.bytes, ...frames]);
    // Another plaintext of two frames: its FINAL has seq 2, the right position after frame 1.
    const otherFinal = seal(Buffer.concat(rawGeneration([], { db: bytes(100_000, 9) }))).at(-1) as Buffer;
    expect(await streamed(archive([...longSealed.slice(0, 2), otherFinal]))).toMatchObject({
      ok: false,
      code: "E_FRAME_AUTH",
      index: 2,
    });
    // The same first two frames (same DK, same plaintext, same chain): the FINAL frame
    // authenticates, and the record stream, cut inside the database, refuses it instead.
    const prefixFinal = seal(longPlain.subarray(0, 2 * 65_536)).at(-1) as Buffer;
    expect(await streamed(archive([...longSealed.slice(0, 2), prefixFinal]))).toMatchObject({
      ok: false,
      code: "E_RECORD_SIZE",
      index: 2,
    });
  });
});

/** An error a read ended with, and the bytes of JS heap and of Buffers it added. */
interface Measured {
  error: unknown;
  heap: number;
  buffers: number;
}

/** Bytes of JS heap and of Buffers (ArrayBuffers) in use now. */
function inUse(): { heap: number; buffers: number } {
  const usage = process.memoryUsage();
  return { heap: usage.heapUsed, buffers: usage.arrayBuffers };
}

describe("a frame announcing 0xFFFFFFFF or 65537 bytes (§5 test 16)", () => {
  const FRAME_BUFFER = 65_552; // the reader's one frame buffer: 64 KiB and a tag
  let keys: VpbkKeys;
  let gc: () => void;

  beforeAll(async () => {
    keys = (await unlockHeader(parseHeader(long.subarray(0, HEADER_BYTES)), unlock())).keys;
    gc = collector();
  });

  /** `long` with the length field of frame `index` set to `length`. */
  function announcing(index: number, length: number): Buffer {
    const copy = Buffer.from(long);
    copy.writeUInt32BE(length, HEADER_BYTES + index * FRAME);
    return copy;
  }

  /** What reading frame `index` alone adds, the frames before it read and the garbage collected. */
  async function badFrame(archive: Buffer, index: number): Promise<Measured> {
    const frames = readFrames(await openSource(archive.subarray(HEADER_BYTES)), keys, HEADER_BYTES);
    for (let i = 0; i < index; i += 1) await frames.next();
    gc();
    const before = inUse();
    const error = await frames.next().catch((e: unknown) => e);
    const after = inUse();
    return { error, heap: after.heap - before.heap, buffers: after.buffers - before.buffers };
  }

  /**
   * The most a whole read from memory (no file read-ahead) keeps live above a collected baseline,
   * as each frame is yielded and once the read failed.
   */
  async function wholeRead(archive: Buffer): Promise<Measured> {
    gc();
    const base = inUse();
    const peak = { heap: 0, buffers: 0 };
    const sample = () => {
      const now = inUse();
      peak.heap = Math.max(peak.heap, now.heap - base.heap);
      peak.buffers = Math.max(peak.buffers, now.buffers - base.buffers);
    };
    let error: unknown;
    try {
      for await (const _frame of readFrames(await openSource(archive.subarray(HEADER_BYTES)), keys, HEADER_BYTES)) {
        gc();
        sample();
      }
    } catch (e) {
      gc();
      sample();
      error = e;
    }
    return { error, ...peak };
  }

  /**
   * The least each measure took over five runs, after a warm-up run: a buffer sized by the frame
   * header would be allocated every time, while the heap's own noise (code compiled late, a
   * collection's timing, more of both while other test files load the machine) is not there every
   * time.
   */
  async function measure(archive: Buffer, index: number) {
    const runs: { frame: Measured; whole: Measured }[] = [];
    for (let run = 0; run < 6; run += 1) {
      runs.push({ frame: await badFrame(archive, index), whole: await wholeRead(archive) });
    }
    const least = (pick: (run: { frame: Measured; whole: Measured }) => number) => Math.min(...runs.slice(1).map(pick));
    return {
      errors: runs.flatMap((r) => [r.frame.error, r.whole.error]),
      frame: { heap: least((r) => r.frame.heap), buffers: least((r) => r.frame.buffers) },
      whole: { heap: least((r) => r.whole.heap), buffers: least((r) => r.whole.buffers) },
    };
  }

  it.each([
    ["0xFFFFFFFF", 0xffff_ffff],
    ["65537", 65_537],
  ])("length %s: E_LEN before any allocation, memory within 2 × 64 KiB of the baseline", async (_name, length) => {
    for (const index of [0, 1, 4]) {
      const archive = announcing(index, length);
      expect(await outcome(archive), `frame ${index}`).toMatchObject({ ok: false, code: "E_LEN", index });
      const { errors, frame, whole } = await measure(archive, index);
      for (const error of errors) expect(VpbkError.is(error, "E_LEN"), `frame ${index}: ${String(error)}`).toBe(true);
      // Reading the bad frame allocates no buffer (for frame 0: only the reader's one frame buffer,
      // allocated up front); a buffer sized by the announced length would be over 64 KiB.
      expect(frame.buffers, `frame ${index}`).toBeLessThan((index === 0 ? FRAME_BUFFER : 0) + 4096);
      expect(frame.heap + frame.buffers, `frame ${index}`).toBeLessThan(2 * 64 * 1024);
      // A whole read keeps at most the frame buffer and the plaintext last yielded.
      expect(whole.buffers, `frame ${index}`).toBeLessThanOrEqual(2 * FRAME_BUFFER);
      expect(whole.heap, `frame ${index}`).toBeLessThan(64 * 1024);
    }
  });
});
