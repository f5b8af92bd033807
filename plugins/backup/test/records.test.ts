import { describe, expect, it } from "vitest";
import {
  caseFoldKey,
  createVpbkWriter,
  HEADER_BYTES,
  openVpbk,
  parseHeader,
  pathViolation,
  RecordDecoder,
  type RecordEvent,
  unlockHeader,
  verifyVpbk,
  VpbkError,
  type VpbkWriter,
} from "../src/index.js";
import {
  bytes,
  chunked,
  CREATED_MS,
  kek,
  PASSPHRASE,
  TEST_KDF,
  endRecord,
  manifestRecord,
  minimalBody,
  outcome,
  rawContentRoot,
  rawGeneration,
  rawRecord,
  sealPlaintext,
  sealRecords,
  T,
  unlock,
  writeArchive,
} from "./support.js";

const EMPTY = Buffer.alloc(0);

/** Unsafe paths (§5 tests 17 and 18), as bytes, each with why. */
const UNSAFE: [string, Buffer][] = [
  ["../x", Buffer.from("../x")],
  ["media/../../x", Buffer.from("media/../../x")],
  ["a/../../x (not allowlisted either)", Buffer.from("a/../../x")],
  ["/etc/passwd", Buffer.from("/etc/passwd")],
  ["C:\\x", Buffer.from("C:\\x")],
  ["media\\..\\x", Buffer.from("media\\..\\x")],
  ["media//b", Buffer.from("media//b")],
  ["./media/a", Buffer.from("./media/a")],
  ["media/./a", Buffer.from("media/./a")],
  ["media/", Buffer.from("media/")],
  ["media/a/", Buffer.from("media/a/")],
  ["a NUL inside", Buffer.from("media/a\0b")],
  ["a newline", Buffer.from("media/a\nb")],
  ["DEL", Buffer.from("media/a\x7fb")],
  ["a colon", Buffer.from("media/a:b")],
  ["a 256-byte segment", Buffer.from(`media/${"x".repeat(256)}`)],
  ["1025 bytes in all", Buffer.from(`media/${Array.from({ length: 8 }, () => "y".repeat(127)).join("/")}`)],
  ["non-NFC", Buffer.from("media/e\u0301.jpg")],
  ["not UTF-8", Buffer.concat([Buffer.from("media/"), Buffer.from([0xff, 0xfe])])],
  ["an overlong UTF-8 slash", Buffer.concat([Buffer.from("media"), Buffer.from([0xc0, 0xaf]), Buffer.from("x")])],
  ["../ on top", Buffer.from("../media")],
  ["node_modules/", Buffer.from("node_modules/x")],
  [".ssh/", Buffer.from(".ssh/authorized_keys")],
  ["Media (case differs from the allowlist)", Buffer.from("Media/a")],
  ["empty", EMPTY],
];

describe("the path rules", () => {
  it("refuse every unsafe path", () => {
    for (const [name, path] of UNSAFE) expect(pathViolation(path), name).toBeTypeOf("string");
  });

  it("accept the data dir's paths, Unicode in NFC included", () => {
    for (const path of [
      "db",
      "db/vellum.sqlite",
      "media/2026/01/ab.jpg",
      ".vellum/restored-from.json",
      "mailboxes/a b/c",
      "pgp/k.asc",
      "settings/..hidden",
      "media/ünïcode—名前",
      `media/${"x".repeat(255)}`,
    ]) {
      expect(pathViolation(Buffer.from(path)), path).toBeUndefined();
    }
  });

  it("fold case for collisions on case-insensitive filesystems", () => {
    expect(caseFoldKey("A.JPG")).toBe(caseFoldKey("a.jpg"));
    expect(caseFoldKey("STRASSE")).toBe(caseFoldKey("straße"));
    expect(caseFoldKey("a")).not.toBe(caseFoldKey("b"));
  });
});

/** Writes a generation whose only unusual step is `step`; resolves with what `step` threw. */
async function writerRefusal(step: (w: VpbkWriter) => Promise<void>): Promise<VpbkError> {
  let refused: unknown;
  const { archive } = await writeArchive(async (w) => {
    await minimalBody(w);
    await w.dir("media");
    await w.dir("media/a");
    try {
      await step(w);
    } catch (error) {
      refused = error;
    }
    // The writer refused the record before writing any of it: it goes on, and the result verifies.
    await w.file("media/z", Buffer.from("after"));
  });
  expect(await outcome(archive)).toMatchObject({ ok: true });
  expect(refused).toBeInstanceOf(VpbkError);
  return refused as VpbkError;
}

describe("the writer (R1 at write time)", () => {
  it("refuses each unsafe path before writing any of its bytes, and stays usable", async () => {
    for (const [name, path] of UNSAFE) {
      const text = path.toString("utf8");
      if (Buffer.from(text).equals(path) === false) continue; // not expressible as a string
      const error = await writerRefusal((w) => w.file(text, Buffer.from("x")));
      expect(error.code, name).toBe("E_RECORD_PATH");
    }
    expect((await writerRefusal((w) => w.file("media/\ud800", Buffer.from("x")))).code).toBe("E_RECORD_PATH");
  });

  it("refuses records out of order, duplicates, case-folded duplicates and a missing parent DIR", async () => {
    const cases: [string, (w: VpbkWriter) => Promise<void>, string][] = [
      ["out of order", (w) => w.file("db/other", Buffer.from("x")), "E_RECORD_ORDER"],
      ["duplicate", (w) => w.dir("media/a"), "E_RECORD_ORDER"],
      [
        "case-folded duplicate",
        async (w) => {
          await w.file("media/a/X.jpg", Buffer.from("1"));
          await w.file("media/a/x.jpg", Buffer.from("2"));
        },
        "E_RECORD_ORDER",
      ],
      ["missing parent", (w) => w.file("media/b/c.jpg", Buffer.from("x")), "E_RECORD_PARENT"],
      ["a second SQLITE_DB", (w) => w.sqliteDb(Buffer.from("x")), "E_RECORD_STRUCTURE"],
      ["size not given for a stream", (w) => w.file("media/a/s", chunked(Buffer.from("x"))), "E_USAGE"],
    ];
    for (const [name, step, code] of cases) expect((await writerRefusal(step)).code, name).toBe(code);
  });

  it("fails the generation when content does not match its declared size", async () => {
    for (const [declared, actual] of [
      [10, 9],
      [10, 11],
    ] as const) {
      const writer = await createVpbkWriter({
        passphrase: PASSPHRASE,
        createdMs: CREATED_MS,
        manifest: {},
        kdf: TEST_KDF,
        deriveKek: kek,
      });
      const streamError = new Promise((resolve) => writer.readable.on("error", resolve));
      writer.readable.resume();
      await minimalBody(writer);
      await writer.dir("media");
      const write = writer.file("media/x", chunked(bytes(actual, 1), 4), { size: declared });
      await expect(write, `${declared} vs ${actual}`).rejects.toMatchObject({ code: "E_RECORD_SIZE" });
      // The output stream fails too, so whatever writes it to disk discards it.
      expect(await streamError).toMatchObject({ code: "E_RECORD_SIZE" });
      await expect(writer.end()).rejects.toMatchObject({ code: "E_USAGE" });
    }
  });
});

/** Seals raw records and expects the reader to refuse them with `code`, yielding no unsafe path. */
async function expectReaderRefuses(records: Buffer[], code: string, name: string): Promise<void> {
  // A correct content root when the records can be parsed, so that only the fault is a fault.
  let archive: Buffer;
  try {
    archive = await sealRecords(records);
  } catch {
    archive = await sealPlaintext(Buffer.concat(records));
  }
  const yielded: string[] = [];
  let error: unknown;
  try {
    const opened = await openVpbk(archive, unlock());
    for await (const r of opened.records) {
      if ("path" in r) yielded.push(r.path);
      if (r.type === "file" || r.type === "sqlite-db") for await (const _ of r.content);
    }
  } catch (caught) {
    error = caught;
  }
  expect(error, name).toBeInstanceOf(VpbkError);
  expect((error as VpbkError).code, `${name}: ${(error as Error).message}`).toBe(code);
  for (const path of yielded) expect(pathViolation(Buffer.from(path)), `${name} yielded ${path}`).toBeUndefined();
}

describe("the reader (R1: an archive made with the key)", () => {
  it("opens a valid archive made by the tests' own encoder", async () => {
    const records = rawGeneration([
      rawRecord(T.DIR, "media", EMPTY),
      rawRecord(T.DIR, "media/a", EMPTY),
      rawRecord(T.FILE, "media/a-b", Buffer.from("between")),
      rawRecord(T.FILE, "media/a/b", bytes(70_000, 5)),
    ]);
    const result = await outcome(await sealRecords(records));
    expect(result).toMatchObject({
      ok: true,
      summary: { entries: 6, contentRoot: rawContentRoot(records).toString("hex") },
    });
  });

  it("refuses every unsafe path as E_RECORD_PATH and never yields it", async () => {
    for (const [name, path] of UNSAFE) {
      const records = rawGeneration([rawRecord(T.DIR, "media", EMPTY), rawRecord(T.FILE, path, Buffer.from("pwned"))]);
      // The path rules are checked before the order, so where its bytes sort does not matter.
      await expectReaderRefuses(records, "E_RECORD_PATH", name);
    }
  });

  it("refuses unsorted, duplicate and case-folded duplicate paths, and a missing parent", async () => {
    const dir = (p: string) => rawRecord(T.DIR, p, EMPTY);
    const file = (p: string) => rawRecord(T.FILE, p, Buffer.from(p));
    const cases: [string, Buffer[], string][] = [
      ["unsorted", [dir("media"), file("media/b"), file("media/a")], "E_RECORD_ORDER"],
      ["duplicate", [dir("media"), file("media/a"), file("media/a")], "E_RECORD_ORDER"],
      ["duplicate DIR", [dir("media"), dir("media")], "E_RECORD_ORDER"],
      ["case-folded duplicate files", [dir("media"), file("media/A"), file("media/a")], "E_RECORD_ORDER"],
      [
        "case-folded duplicate dirs",
        [dir("media"), dir("media/X"), file("media/X/1"), dir("media/x")],
        "E_RECORD_ORDER",
      ],
      ["FILE before its parent DIR", [file("media/a"), dir("media")], "E_RECORD_PARENT"],
      ["no parent DIR at all", [dir("media"), file("media/a/b")], "E_RECORD_PARENT"],
      ["a FILE as the parent", [dir("media"), file("media/a"), file("media/a/b")], "E_RECORD_PARENT"],
    ];
    for (const [name, middle, code] of cases) await expectReaderRefuses(rawGeneration(middle), code, name);
    // The DB sorts after db/ but is placed after media/.
    const records = rawGeneration();
    const [manifest, dbDir, db, end] = records as [Buffer, Buffer, Buffer, Buffer];
    await expectReaderRefuses([manifest, dbDir, dir("media"), db, end], "E_RECORD_ORDER", "db after media");
  });

  it("refuses record types and flags that do not exist (no links, FIFOs or devices)", async () => {
    for (const type of [0x00, 0x05, 0x06, 0x7e, 0x80, 0xff]) {
      await expectReaderRefuses(rawGeneration([rawRecord(type, "media", EMPTY)]), "E_RECORD_TYPE", `type ${type}`);
    }
    await expectReaderRefuses(
      rawGeneration([rawRecord(T.DIR, "media", EMPTY, { flags: 1 })]),
      "E_RECORD_HEADER",
      "flags",
    );
    await expectReaderRefuses(
      rawGeneration([rawRecord(T.DIR, "media", EMPTY, { mtime: 2n ** 62n })]),
      "E_RECORD_HEADER",
      "mtime",
    );
  });

  it("refuses a stream that is not MANIFEST, DIRs/FILEs with exactly one SQLITE_DB, then END", async () => {
    const [manifest, dbDir, db, end] = rawGeneration() as [Buffer, Buffer, Buffer, Buffer];
    const cases: [string, Buffer[], string][] = [
      ["no MANIFEST", [dbDir, db, end], "E_RECORD_STRUCTURE"],
      ["two MANIFESTs", [manifest, manifest, dbDir, db, end], "E_RECORD_STRUCTURE"],
      ["no SQLITE_DB", [manifest, dbDir, endRecord(1, 0)], "E_RECORD_STRUCTURE"],
      ["two SQLITE_DBs", [manifest, dbDir, db, db, end], "E_RECORD_STRUCTURE"],
      ["no END", [manifest, dbDir, db], "E_RECORD_STRUCTURE"],
      ["a record after END", [manifest, dbDir, db, end, rawRecord(T.DIR, "media", EMPTY)], "E_RECORD_STRUCTURE"],
      ["bytes after END", [manifest, dbDir, db, end, Buffer.from([0])], "E_RECORD_STRUCTURE"],
      ["the data ends inside a record", [manifest, dbDir, db, end.subarray(0, 30)], "E_RECORD_SIZE"],
      [
        "SQLITE_DB at another path",
        [manifest, dbDir, rawRecord(T.SQLITE_DB, "db/other.sqlite", bytes(10, 1)), end],
        "E_RECORD_PATH",
      ],
      ["a MANIFEST with a path", [rawRecord(T.MANIFEST, "media", Buffer.from("{}")), dbDir, db, end], "E_RECORD_PATH"],
      ["MANIFEST not JSON", [rawRecord(T.MANIFEST, "", Buffer.from("{nope")), dbDir, db, end], "E_RECORD_JSON"],
      [
        "MANIFEST of another format",
        [rawRecord(T.MANIFEST, "", Buffer.from('{"format":"tar"}')), dbDir, db, end],
        "E_RECORD_JSON",
      ],
      ["END without totals", [manifest, dbDir, db, rawRecord(T.END, "", Buffer.from("{}"))], "E_RECORD_JSON"],
      ["END totals wrong", [manifest, dbDir, db, endRecord(3, 1000)], "E_TRAILER"],
      ["END file bytes wrong", [manifest, dbDir, db, endRecord(2, 999)], "E_TRAILER"],
    ];
    for (const [name, records, code] of cases) await expectReaderRefuses(records, code, name);
  });

  it("refuses declared sizes over the caps or over what the archive can hold, with no allocation by them", async () => {
    const [manifest, dbDir, db, end] = rawGeneration() as [Buffer, Buffer, Buffer, Buffer];
    const file = (size: bigint) => rawRecord(T.FILE, "media/x", Buffer.from("tiny"), { size });
    const media = rawRecord(T.DIR, "media", EMPTY);
    const cases: [string, Buffer[]][] = [
      ["a FILE over 64 GiB", [manifest, dbDir, db, media, file(64n * 2n ** 30n + 1n), end]],
      ["a FILE of 2^64 - 1 bytes", [manifest, dbDir, db, media, file(2n ** 64n - 1n), end]],
      ["a FILE larger than the archive", [manifest, dbDir, db, media, file(10_000_000n), end]],
      ["a MANIFEST of 2 MiB", [rawRecord(T.MANIFEST, "", Buffer.alloc(2 * 1024 * 1024, 0x20)), dbDir, db, end]],
      ["an END over 64 KiB", [manifest, dbDir, db, rawRecord(T.END, "", Buffer.alloc(65_537, 0x20))]],
      ["a DIR with content", [manifest, dbDir, db, rawRecord(T.DIR, "media", Buffer.from("x")), end]],
    ];
    for (const [name, records] of cases) await expectReaderRefuses(records, "E_RECORD_SIZE", name);
    // A FILE larger than the bytes present, read as a stream of unknown size: the data ends inside it.
    const lying = await sealPlaintext(Buffer.concat([manifest, dbDir, db, media, file(1000n), end]));
    expect(await outcome(chunked(lying))).toMatchObject({ ok: false, code: "E_RECORD_SIZE" });
  });

  it("refuses content that does not match its SHA-256 (a buggy writer with the key)", async () => {
    const [manifest, dbDir, db, end] = rawGeneration() as [Buffer, Buffer, Buffer, Buffer];
    const bad = rawRecord(T.FILE, "media/x", Buffer.from("content"), { digest: bytes(32, 9) });
    await expectReaderRefuses(
      [manifest, dbDir, db, rawRecord(T.DIR, "media", EMPTY), bad, end],
      "E_RECORD_HASH",
      "file",
    );
    const badDir = rawRecord(T.DIR, "media", EMPTY, { digest: bytes(32, 9) });
    await expectReaderRefuses([manifest, dbDir, db, badDir, end], "E_RECORD_HASH", "dir");
    const badManifest = rawRecord(T.MANIFEST, "", manifestRecord().subarray(24, -32), { digest: bytes(32, 1) });
    await expectReaderRefuses([badManifest, dbDir, db, end], "E_RECORD_HASH", "manifest");
  });

  it("with trustContentDigests (read-after-write, data key only) skips content hashes, nothing else", async () => {
    const dataKey = async (archive: Buffer) =>
      (await unlockHeader(parseHeader(archive.subarray(0, HEADER_BYTES)), unlock())).keys.dataKey;
    const trusting = async (archive: Buffer) =>
      verifyVpbk(archive, { dataKey: await dataKey(archive), trustContentDigests: true });
    const media = rawRecord(T.DIR, "media", EMPTY);
    const bad = rawRecord(T.FILE, "media/x", Buffer.from("content"), { digest: bytes(32, 9) });
    const records = rawGeneration([media, bad]);
    const archive = await sealRecords(records);
    // A restore or -verify hashes the content; the read-after-write check takes the carried digest
    // into the content root, which still matches the trailer's.
    expect(await outcome(archive)).toMatchObject({ ok: false, code: "E_RECORD_HASH" });
    expect(await outcome(archive, { dataKey: await dataKey(archive) })).toMatchObject({ code: "E_RECORD_HASH" });
    expect(await trusting(archive)).toMatchObject({ contentRoot: rawContentRoot(records).toString("hex") });
    // The content root, the frames and the record rules are still checked.
    const wrongRoot = await sealPlaintext(Buffer.concat(records), { contentRoot: bytes(32, 3) });
    await expect(trusting(wrongRoot)).rejects.toMatchObject({ code: "E_TRAILER" });
    const flipped = Buffer.from(archive);
    flipped[HEADER_BYTES + 100] = (flipped[HEADER_BYTES + 100] as number) ^ 1;
    await expect(trusting(flipped)).rejects.toMatchObject({ code: "E_FRAME_AUTH" });
    await expect(trusting(await sealRecords(rawGeneration([media, bad, bad])))).rejects.toMatchObject({
      code: "E_RECORD_ORDER",
    });
    // Never with a passphrase: a restore or -verify cannot skip the hashes.
    await expect(verifyVpbk(archive, { ...unlock(), trustContentDigests: true })).rejects.toMatchObject({
      code: "E_USAGE",
    });
  });
});

describe("the record decoder", () => {
  it("decodes the same events whatever the chunking, one byte at a time included", () => {
    const records = rawGeneration([
      rawRecord(T.DIR, "media", EMPTY),
      rawRecord(T.FILE, "media/big", bytes(150_000, 2)),
      rawRecord(T.FILE, "media/empty", EMPTY),
    ]);
    const plaintext = Buffer.concat(records);
    const decode = (sizes: number[]) => {
      const decoder = new RecordDecoder();
      const events: RecordEvent[] = [];
      let at = 0;
      for (let i = 0; at < plaintext.length; i += 1) {
        const n = sizes[i % sizes.length] as number;
        events.push(...decoder.write(plaintext.subarray(at, at + n)));
        at += n;
      }
      const summary = decoder.finish();
      const data = Buffer.concat(events.flatMap((e) => (e.kind === "data" ? [e.data] : [])));
      return { kinds: events.filter((e) => e.kind !== "data").map((e) => e.kind), data, root: summary.contentRoot };
    };
    const whole = decode([plaintext.length]);
    expect(whole.kinds).toEqual([
      "manifest",
      "dir",
      "begin",
      "verified",
      "dir",
      "begin",
      "verified",
      "begin",
      "verified",
      "end",
    ]);
    expect(whole.root).toEqual(rawContentRoot(records));
    for (const sizes of [[1], [3, 7, 1, 65_536], [23], [24, 1, 32]]) {
      const got = sizes[0] === 1 ? decode([1]) : decode(sizes);
      expect(got.kinds).toEqual(whole.kinds);
      expect(got.data.equals(whole.data)).toBe(true);
      expect(got.root).toEqual(whole.root);
    }
  });
});
