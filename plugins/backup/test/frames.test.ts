import { beforeAll, describe, expect, it } from "vitest";
import {
  createHeader,
  FRAME_FINAL,
  FrameSealer,
  openFrame,
  sealFrame,
  type VpbkKeys,
  VpbkError,
} from "../src/index.js";
import {
  bytes,
  chunked,
  CREATED_MS,
  kek,
  minimalBody,
  outcome,
  PASSPHRASE,
  rawContentRoot,
  rawGeneration,
  sealPlaintext,
  smallGeneration,
  TEST_KDF,
  writeArchive,
} from "./support.js";

interface Frame {
  offset: number;
  length: number;
  kind: number;
}

/** The frames of an archive, parsed from their cleartext headers. */
function framesOf(archive: Buffer): Frame[] {
  const frames: Frame[] = [];
  for (let offset = 188; offset < archive.length;) {
    const length = 32 + archive.readUInt32BE(offset);
    frames.push({ offset, length, kind: archive[offset + 4] as number });
    offset += length;
  }
  return frames;
}

function frameBytes(archive: Buffer, frame: Frame): Buffer {
  return archive.subarray(frame.offset, frame.offset + frame.length);
}

/** Rebuilds an archive from its header and a list of frames. */
function assemble(archive: Buffer, frames: Buffer[]): Buffer {
  return Buffer.concat([archive.subarray(0, 188), ...frames]);
}

function setSeq(frame: Buffer, seq: number): Buffer {
  const copy = Buffer.from(frame);
  copy.writeBigUInt64BE(BigInt(seq), 8);
  return copy;
}

let small: Buffer; // header + 2 DATA + FINAL (about 70 KB)
let smallFrames: Frame[];
let long: Buffer; // header + 5 DATA + FINAL
let longFrames: Frame[];
let other: Buffer; // another generation, same passphrase, same size as `long`

beforeAll(async () => {
  small = (await smallGeneration()).archive;
  smallFrames = framesOf(small);
  const body = (w: Parameters<typeof minimalBody>[0]) => minimalBody(w, 300_000);
  long = (await writeArchive(body)).archive;
  longFrames = framesOf(long);
  other = (await writeArchive(body)).archive;
});

describe(".vpbk frames", () => {
  it("has the sample shapes the tests assume", () => {
    expect(smallFrames.map((f) => f.kind)).toEqual([1, 1, 2]);
    expect(smallFrames[0]?.length).toBe(65_568);
    expect(longFrames.map((f) => f.kind)).toEqual([1, 1, 1, 1, 1, 2]);
    expect(other.length).toBe(long.length);
  });

  it("rejects single-bit flips over every frame header, tag and the FINAL frame, and a spread of ciphertext", async () => {
    const positions = new Set<number>();
    for (const frame of smallFrames) {
      for (let i = 0; i < 16; i += 1) positions.add(frame.offset + i);
      for (let i = frame.length - 16; i < frame.length; i += 1) positions.add(frame.offset + i);
      if (frame.kind === FRAME_FINAL) for (let i = 0; i < frame.length; i += 1) positions.add(frame.offset + i);
    }
    // Every 7th byte of the ciphertext, first and last bytes of each frame body included.
    for (let at = 188; at < small.length; at += 7) positions.add(at);
    for (const frame of smallFrames) positions.add(frame.offset + 16).add(frame.offset + frame.length - 17);
    let flips = 0;
    for (const at of positions) {
      const frame = smallFrames.findIndex((f) => at >= f.offset && at < f.offset + f.length);
      const inHeader = at - (smallFrames[frame] as Frame).offset < 16;
      const bits = inHeader || frame === smallFrames.length - 1 ? [0, 1, 2, 3, 4, 5, 6, 7] : [at % 8];
      for (const bit of bits) {
        const flipped = Buffer.from(small);
        flipped[at] = (flipped[at] as number) ^ (1 << bit);
        const result = await outcome(flipped);
        flips += 1;
        expect(result.ok, `byte ${at} bit ${bit}`).toBe(false);
        if (result.ok) continue;
        const allowed = inHeader
          ? ["E_LEN", "E_KIND", "E_SEQ", "E_FRAME_RSVD", "E_FRAME_AUTH", "E_TRUNCATED", "E_RECORD_SIZE"]
          : ["E_FRAME_AUTH"];
        expect(allowed, `byte ${at} bit ${bit}: ${result.code}`).toContain(result.code);
        if (result.code === "E_FRAME_AUTH") expect(result.index, `byte ${at}`).toBe(frame);
        if (!inHeader) expect(result.offset).toBe((smallFrames[frame] as Frame).offset);
      }
    }
    expect(flips).toBeGreaterThan(10_000);
  });

  it("names the frame of a flipped ciphertext byte in the first, middle and last DATA frame and in FINAL", async () => {
    for (const [i, frame] of longFrames.entries()) {
      if (i !== 0 && i !== 2 && i !== longFrames.length - 2 && i !== longFrames.length - 1) continue;
      const flipped = Buffer.from(long);
      const at = frame.offset + 16 + 5;
      flipped[at] = (flipped[at] as number) ^ 0x40;
      const result = await outcome(flipped);
      expect(result).toMatchObject({ ok: false, code: "E_FRAME_AUTH", index: i, offset: frame.offset });
      if (!result.ok) {
        expect(result.error.describe()).toContain(`frame ${i}, byte offset ${frame.offset}`);
        expect(result.error.exitCode).toBe(1);
      }
    }
  });

  it("rejects truncation: mid-header E_SHORT, every frame boundary E_NO_FINAL, mid-frame E_TRUNCATED", async () => {
    const boundaries = [188, ...smallFrames.map((f) => f.offset + f.length)].filter((b) => b < small.length);
    const lengths = new Set<number>([0, 1, 187]);
    for (const b of boundaries) for (let d = -40; d <= 40; d += 1) lengths.add(b + d);
    for (let length = 188; length < small.length; length += 13) lengths.add(length);
    lengths.add(small.length - 1);
    let checked = 0;
    for (const length of [...lengths].filter((n) => n >= 0 && n < small.length)) {
      const cut = small.subarray(0, length);
      const expected = length < 188 ? "E_SHORT" : boundaries.includes(length) ? "E_NO_FINAL" : "E_TRUNCATED";
      // As a stream (size unknown) the cut is found where it is.
      expect(await outcome(chunked(cut, 8192)), `length ${length}`).toMatchObject({ ok: false, code: expected });
      // As a file (size known), a record that cannot fit in what is left may be refused first.
      const known = await outcome(cut);
      expect(known.ok, `length ${length}`).toBe(false);
      if (!known.ok && known.code !== expected) expect(known.code, `length ${length}`).toBe("E_RECORD_SIZE");
      checked += 1;
    }
    // Dropping exactly the FINAL frame is E_NO_FINAL either way.
    const noFinal = small.subarray(0, (smallFrames.at(-1) as Frame).offset);
    expect(await outcome(noFinal)).toMatchObject({ ok: false, code: "E_NO_FINAL", index: 2 });
    expect(checked).toBeGreaterThan(5000);
  });

  it("rejects reordered, duplicated and dropped frames (E_SEQ), and E_FRAME_AUTH once seq is rewritten", async () => {
    const f = longFrames.map((frame) => frameBytes(long, frame));
    const [f0, f1, f2, f3, f4, fin] = f as [Buffer, Buffer, Buffer, Buffer, Buffer, Buffer];
    const cases: [string, Buffer[], number][] = [
      ["swap 0 and 1", [f1, f0, f2, f3, f4, fin], 0],
      ["swap 2 and 3", [f0, f1, f3, f2, f4, fin], 2],
      ["duplicate 1", [f0, f1, f1, f2, f3, f4, fin], 2],
      ["drop 2", [f0, f1, f3, f4, fin], 2],
      ["drop the last DATA frame", [f0, f1, f2, f3, fin], 4],
    ];
    for (const [name, frames, index] of cases) {
      await expectRejected(assemble(long, frames), name, "E_SEQ", index);
      const renumbered = frames.map((frame, seq) => setSeq(frame, seq));
      await expectRejected(assemble(long, renumbered), `${name}, renumbered`, "E_FRAME_AUTH", index);
    }
  });

  it("rejects frames spliced from another generation with the same passphrase, and a header moved onto another body", async () => {
    const mine = longFrames.map((frame) => frameBytes(long, frame));
    const theirs = framesOf(other).map((frame) => frameBytes(other, frame));
    for (const i of [0, 2, 5]) {
      const spliced = mine.map((frame, j) => (j === i ? (theirs[j] as Buffer) : frame));
      expect(await outcome(assemble(long, spliced)), `frame ${i}`).toMatchObject({
        ok: false,
        code: "E_FRAME_AUTH",
        index: i,
      });
    }
    const moved = Buffer.concat([long.subarray(0, 188), other.subarray(188)]);
    expect(await outcome(moved)).toMatchObject({ ok: false, code: "E_FRAME_AUTH", index: 0 });
    // A shorter generation's FINAL frame grafted after frame k of the longer one.
    const smallFinal = frameBytes(small, smallFrames.at(-1) as Frame);
    for (const k of [1, 2, 4]) {
      const grafted = [...mine.slice(0, k + 1), setSeq(smallFinal, k + 1)];
      await expectRejected(assemble(long, grafted), `after ${k}`, "E_FRAME_AUTH", k + 1);
    }
  });

  it("rejects anything after the FINAL frame: garbage, a second FINAL frame, one byte", async () => {
    const fin = frameBytes(long, longFrames.at(-1) as Frame);
    for (const extra of [Buffer.from("garbage"), fin, Buffer.alloc(1)]) {
      expect(await outcome(Buffer.concat([long, extra]))).toMatchObject({
        ok: false,
        code: "E_TRAILING",
        offset: long.length,
      });
      expect(await outcome(chunked(Buffer.concat([long, extra]), 999))).toMatchObject({ code: "E_TRAILING" });
    }
  });

  it("checks a frame's length before reading or allocating it, and its kind and reserved bytes", async () => {
    const edit = (frame: number, change: (head: Buffer) => void) => {
      const copy = Buffer.from(long);
      change(copy.subarray((longFrames[frame] as Frame).offset));
      return copy;
    };
    const cases: [string, Buffer, string][] = [
      ["length 0xFFFFFFFF", edit(1, (h) => h.writeUInt32BE(0xffff_ffff, 0)), "E_LEN"],
      ["length 65537", edit(1, (h) => h.writeUInt32BE(65_537, 0)), "E_LEN"],
      ["length 0", edit(1, (h) => h.writeUInt32BE(0, 0)), "E_LEN"],
      ["FINAL length 63", edit(5, (h) => h.writeUInt32BE(63, 0)), "E_LEN"],
      ["kind 0x03", edit(1, (h) => h.writeUInt8(3, 4)), "E_KIND"],
      ["kind 0x00", edit(0, (h) => h.writeUInt8(0, 4)), "E_KIND"],
      ["reserved byte", edit(2, (h) => h.writeUInt8(1, 6)), "E_FRAME_RSVD"],
      ["seq high bits", edit(3, (h) => h.writeUInt32BE(1, 8)), "E_SEQ"],
    ];
    for (const [name, archive, code] of cases) {
      expect(await outcome(archive), name).toMatchObject({ ok: false, code });
    }
  });

  it("refuses a 4-byte tag: authTagLength is 16", async () => {
    const { keys } = await createHeader({
      passphrase: PASSPHRASE,
      createdMs: CREATED_MS,
      kdf: TEST_KDF,
      deriveKek: kek,
    });
    const frame = sealFrame(keys, 0, 1, Buffer.from("hello"), Buffer.alloc(16));
    const head = frame.subarray(0, 16);
    const where = { index: 0, offset: 188 };
    expect(openFrame(keys, 0, head, frame.subarray(16, 21), frame.subarray(21), Buffer.alloc(16), where)).toEqual(
      Buffer.from("hello"),
    );
    expect(() =>
      openFrame(keys, 0, head, frame.subarray(16, 21), frame.subarray(21, 25), Buffer.alloc(16), where),
    ).toThrow(expect.objectContaining({ code: "E_FRAME_AUTH" }));
  });

  it("refuses non-canonical framing made with the key: a DATA frame after a short one", async () => {
    const records = rawGeneration();
    const plaintext = Buffer.concat(records);
    const { header, keys } = await createHeader({
      passphrase: PASSPHRASE,
      createdMs: CREATED_MS,
      kdf: TEST_KDF,
      deriveKek: kek,
    });
    const split = 500;
    const frames = sealChain(keys, [
      [1, plaintext.subarray(0, split)],
      [1, plaintext.subarray(split)],
    ]);
    const trailer = finalPlaintext(2, plaintext.length, CREATED_MS + 1, rawContentRoot(records));
    frames.push(...sealChain(keys, [[2, trailer]], 2, frames.at(-1)?.subarray(-16)));
    expect(await outcome(Buffer.concat([header.bytes, ...frames]))).toMatchObject({
      ok: false,
      code: "E_LEN",
      index: 1,
    });
    // The same bytes framed canonically are fine: the framing was the only fault.
    expect(await outcome(await sealPlaintext(plaintext, { contentRoot: rawContentRoot(records) }))).toMatchObject({
      ok: true,
    });
  });

  it("refuses an authentic FINAL frame whose trailer is wrong (E_TRAILER)", async () => {
    const records = rawGeneration();
    const plaintext = Buffer.concat(records);
    const root = rawContentRoot(records);
    const seal = async (trailer: Buffer) => {
      const { header, keys } = await createHeader({
        passphrase: PASSPHRASE,
        createdMs: CREATED_MS,
        kdf: TEST_KDF,
        deriveKek: kek,
      });
      const frames = sealChain(keys, [[1, plaintext]]);
      frames.push(...sealChain(keys, [[2, trailer]], 1, frames[0]?.subarray(-16)));
      return Buffer.concat([header.bytes, ...frames]);
    };
    const good = finalPlaintext(1, plaintext.length, CREATED_MS, root);
    expect(await outcome(await seal(good))).toMatchObject({ ok: true });
    const cases: [string, Buffer][] = [
      ["frame count", finalPlaintext(2, plaintext.length, CREATED_MS, root)],
      ["byte count", finalPlaintext(1, plaintext.length + 1, CREATED_MS, root)],
      ["content root", finalPlaintext(1, plaintext.length, CREATED_MS, bytes(32, 1))],
      ["sealed before created", finalPlaintext(1, plaintext.length, CREATED_MS - 1, root)],
      ["sealed over 24 h after", finalPlaintext(1, plaintext.length, CREATED_MS + 86_400_001, root)],
      ["no VPBK-END", Buffer.concat([Buffer.from("VPBK-EN!"), good.subarray(8)])],
    ];
    for (const [name, trailer] of cases) {
      expect(await outcome(await seal(trailer)), name).toMatchObject({ ok: false, code: "E_TRAILER" });
    }
  });

  it("seals with the FrameSealer exactly as the writer frames (the low-level path the tests craft with)", async () => {
    const { keys } = await createHeader({
      passphrase: PASSPHRASE,
      createdMs: CREATED_MS,
      kdf: TEST_KDF,
      deriveKek: kek,
    });
    const sealer = new FrameSealer(keys);
    const out = [
      ...sealer.write(bytes(65_536 * 2 + 10, 4)),
      ...sealer.finish({ sealedMs: 1, contentRoot: Buffer.alloc(32) }),
    ];
    expect(out.map((f) => f.length)).toEqual([65_568, 65_568, 42, 96]);
    expect(() => sealer.write(Buffer.from("x"))).toThrow(VpbkError);
    // Several frames per buffer (as the writer pushes them): the same bytes, in fewer buffers.
    const batched = new FrameSealer(keys, { framesPerBuffer: 3 });
    const together = [
      ...batched.write(bytes(65_536 * 2 + 10, 4)),
      ...batched.finish({ sealedMs: 1, contentRoot: Buffer.alloc(32) }),
    ];
    expect(together.map((b) => b.length)).toEqual([65_568 * 2 + 42, 96]);
    expect(Buffer.concat(together).equals(Buffer.concat(out))).toBe(true);
  });
});

/**
 * Expects `archive` refused with `code` at frame `index` when read as a stream (the frame layer
 * finds the fault where it is); read with its size known, a shortened archive may be refused
 * earlier, at the first record that no longer fits in it (E_RECORD_SIZE, §2.7 check 7).
 */
async function expectRejected(archive: Buffer, name: string, code: string, index: number): Promise<void> {
  expect(await outcome(chunked(archive, 10_000)), name).toMatchObject({ ok: false, code, index });
  const known = await outcome(archive);
  expect(known.ok, name).toBe(false);
  if (!known.ok && known.code !== code) {
    expect(known.code, name).toBe("E_RECORD_SIZE");
    expect(archive.length, name).toBeLessThan(long.length);
  }
  if (!known.ok && known.code === code) expect(known.index, name).toBe(index);
}

function sealChain(
  keys: VpbkKeys,
  frames: [number, Buffer][],
  firstSeq = 0,
  prevTag: Buffer = Buffer.alloc(16),
): Buffer[] {
  const out: Buffer[] = [];
  let tag: Buffer = prevTag;
  for (const [i, [kind, plaintext]] of frames.entries()) {
    const frame = sealFrame(keys, firstSeq + i, kind, plaintext, tag);
    tag = frame.subarray(-16);
    out.push(frame);
  }
  return out;
}

function finalPlaintext(frames: number, dataBytes: number, sealedMs: number, root: Buffer): Buffer {
  const pt = Buffer.alloc(64);
  pt.write("VPBK-END", 0, "ascii");
  pt.writeBigUInt64BE(BigInt(frames), 8);
  pt.writeBigUInt64BE(BigInt(dataBytes), 16);
  pt.writeBigUInt64BE(BigInt(sealedMs), 24);
  root.copy(pt, 32);
  return pt;
}
