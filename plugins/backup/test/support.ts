import { createHash } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import Database from "better-sqlite3";
import {
  argon2idKek,
  createHeader,
  createVpbkWriter,
  FrameSealer,
  type KdfParams,
  type KekDerivation,
  verifyVpbk,
  VpbkError,
  type VpbkSource,
  type VpbkSummary,
  type VpbkUnlock,
  type VpbkWriter,
  type VpbkWriteSummary,
} from "../src/index.js";

/** The cheapest parameters the reader accepts (m ≥ 19456 KiB, t ≥ 1, p ≥ 1): tests only. */
export const TEST_KDF: KdfParams = { memoryKiB: 19_456, timeCost: 1, parallelism: 1 };
export const PASSPHRASE = "correct horse battery staple 42";
export const CREATED_MS = Date.UTC(2026, 0, 15, 10, 30, 0);

/** The real Argon2id, memoised by (passphrase, salt, parameters) as backup-format.md §5 advises. */
export function memoKek(): KekDerivation & { calls: number; derivations: number } {
  const cache = new Map<string, Buffer>();
  const derive = Object.assign(
    async (passphrase: Buffer, salt: Buffer, params: KdfParams) => {
      derive.calls += 1;
      const key = `${passphrase.toString("hex")}:${salt.toString("hex")}:${params.memoryKiB}:${params.timeCost}:${params.parallelism}`;
      let kek = cache.get(key);
      if (kek === undefined) {
        derive.derivations += 1;
        kek = await argon2idKek(passphrase, salt, params);
        cache.set(key, kek);
      }
      return Buffer.from(kek);
    },
    { calls: 0, derivations: 0 },
  );
  return derive;
}

export const kek = memoKek();

export function unlock(passphrase: string | Uint8Array = PASSPHRASE): VpbkUnlock {
  return { passphrase, deriveKek: kek };
}

/** Deterministic pseudo-random bytes (not a secret: sample content). */
export function bytes(length: number, seed: number): Buffer {
  const out = Buffer.alloc(length);
  let block = createHash("sha256").update(`seed ${seed}`).digest();
  for (let at = 0; at < length; at += 32) {
    block.copy(out, at, 0, Math.min(32, length - at));
    block = createHash("sha256").update(block).digest();
  }
  return out;
}

export function sha256(data: Uint8Array): Buffer {
  return createHash("sha256").update(data).digest();
}

/** Writes a generation with the real writer and collects the encrypted bytes. */
export async function writeArchive(
  fill: (writer: VpbkWriter) => Promise<void>,
  options: { passphrase?: string; kdf?: KdfParams; sealedMs?: number; end?: Record<string, unknown> } = {},
): Promise<{ archive: Buffer; summary: VpbkWriteSummary; writer: VpbkWriter }> {
  const writer = await createVpbkWriter({
    passphrase: options.passphrase ?? PASSPHRASE,
    createdMs: CREATED_MS,
    manifest: { app: { name: "vellum", version: "0.1.0" }, host: "test" },
    kdf: options.kdf ?? TEST_KDF,
    deriveKek: kek,
  });
  const chunks: Buffer[] = [];
  const collected = (async () => {
    for await (const chunk of writer.readable) chunks.push(chunk as Buffer);
  })();
  await fill(writer);
  const summary = await writer.end({ sealedMs: options.sealedMs ?? CREATED_MS + 1500, end: options.end });
  await collected;
  return { archive: Buffer.concat(chunks), summary, writer };
}

/** DIR db, the SQLITE_DB image: the smallest valid generation's body. */
export async function minimalBody(writer: VpbkWriter, dbBytes = 4096): Promise<void> {
  await writer.dir("db");
  await writer.sqliteDb(bytes(dbBytes, 7));
}

/** Header + 2 DATA frames + FINAL, like the spec's exhaustive sample (about 70 KB). */
export function smallGeneration(passphrase = PASSPHRASE) {
  return writeArchive((w) => minimalBody(w, 70_000), { passphrase });
}

/** What a verification came to: the summary, or the error's code, frame and offset. */
export type Outcome =
  | { ok: true; summary: VpbkSummary }
  | { ok: false; code: string; index: number | undefined; offset: number | undefined; error: VpbkError };

export async function outcome(source: VpbkSource, how: VpbkUnlock = unlock()): Promise<Outcome> {
  try {
    return { ok: true, summary: await verifyVpbk(source, how) };
  } catch (error) {
    if (!(error instanceof VpbkError)) throw error;
    return { ok: false, code: error.code, index: error.index, offset: error.offset, error };
  }
}

/** The archive as a stream of chunks of `size` bytes: a source whose total size is unknown. */
export async function* chunked(archive: Buffer, size = 4096): AsyncGenerator<Buffer> {
  for (let at = 0; at < archive.length; at += size) yield archive.subarray(at, at + size);
}

// The test's own record encoder, written from backup-format.md §2.5 (not the library's), to craft
// plaintext a correct writer would refuse to produce.

export const T = { MANIFEST: 0x01, DIR: 0x02, FILE: 0x03, SQLITE_DB: 0x04, END: 0x7f } as const;

export interface RawRecordOptions {
  flags?: number;
  mode?: number;
  mtime?: bigint;
  /** Declared size, when it should differ from the content's. */
  size?: bigint;
  /** The trailing digest, when it should differ from SHA-256 of the content. */
  digest?: Buffer;
}

export function rawRecord(type: number, path: string | Buffer, content: Buffer, o: RawRecordOptions = {}): Buffer {
  const p = typeof path === "string" ? Buffer.from(path, "utf8") : path;
  const head = Buffer.alloc(24);
  head.writeUInt8(type, 0);
  head.writeUInt8(o.flags ?? 0, 1);
  head.writeUInt16BE(p.length, 2);
  head.writeUInt32BE(o.mode ?? 0o600, 4);
  head.writeBigInt64BE(o.mtime ?? 0n, 8);
  head.writeBigUInt64BE(o.size ?? BigInt(content.length), 16);
  return Buffer.concat([head, p, content, o.digest ?? sha256(content)]);
}

export function manifestRecord(extra: Record<string, unknown> = {}): Buffer {
  const json = { format: "vellum-backup", formatVersion: 1, app: { name: "vellum", version: "0.1.0" }, ...extra };
  return rawRecord(T.MANIFEST, "", Buffer.from(JSON.stringify(json)));
}

export function endRecord(entries: number, fileBytes: number, extra: Record<string, unknown> = {}): Buffer {
  return rawRecord(T.END, "", Buffer.from(JSON.stringify({ entries, fileBytes, ...extra })));
}

/** The content root of raw records, computed from the spec: type ‖ u16 path_len ‖ path ‖ u64 size ‖ sha256. */
export function rawContentRoot(records: Buffer[]): Buffer {
  const root = createHash("sha256");
  for (const r of records) {
    const pathLength = r.readUInt16BE(2);
    root
      .update(r.subarray(0, 1))
      .update(r.subarray(2, 4))
      .update(r.subarray(24, 24 + pathLength));
    root.update(r.subarray(16, 24)).update(r.subarray(r.length - 32));
  }
  return root.digest();
}

/**
 * An archive sealed with the real key schedule (a fresh DK under the test passphrase) around
 * whatever plaintext the test made: property R1's "archive created with the key".
 */
export async function sealPlaintext(
  plaintext: Buffer,
  options: { contentRoot?: Buffer; sealedMs?: number; createdMs?: number } = {},
): Promise<Buffer> {
  const { header, keys } = await createHeader({
    passphrase: PASSPHRASE,
    createdMs: options.createdMs ?? CREATED_MS,
    kdf: TEST_KDF,
    deriveKek: kek,
  });
  const sealer = new FrameSealer(keys);
  const frames = [header.bytes, ...sealer.write(plaintext)];
  frames.push(
    ...sealer.finish({
      sealedMs: options.sealedMs ?? CREATED_MS + 1000,
      contentRoot: options.contentRoot ?? Buffer.alloc(32),
    }),
  );
  return Buffer.concat(frames);
}

/** Seals raw records with a correct content root. */
export function sealRecords(records: Buffer[], options: { sealedMs?: number } = {}): Promise<Buffer> {
  return sealPlaintext(Buffer.concat(records), { ...options, contentRoot: rawContentRoot(records) });
}

/** A valid raw body: MANIFEST, DIR db, SQLITE_DB, then `middle`, then END with the right totals. */
export function rawGeneration(middle: Buffer[] = [], options: { db?: Buffer } = {}): Buffer[] {
  const db = options.db ?? bytes(1000, 3);
  const body = [
    rawRecord(T.DIR, "db", Buffer.alloc(0), { mode: 0o700 }),
    rawRecord(T.SQLITE_DB, "db/vellum.sqlite", db),
  ];
  const all = [...body, ...middle];
  let entries = 0;
  let fileBytes = 0;
  for (const r of all) {
    entries += 1;
    if (r[0] !== T.DIR) fileBytes += Number(r.readBigUInt64BE(16));
  }
  return [manifestRecord(), ...all, endRecord(entries, fileBytes)];
}

/**
 * V8's collector, exposed at run time (the test process is not started with --expose-gc). Run
 * twice: the second collection finishes sweeping the first's dead Buffers, which
 * `arrayBuffers` would otherwise still count.
 */
export function collector(): () => void {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  return () => {
    gc();
    gc();
  };
}

/** A data dir at `dataDir` holding only `db/vellum.sqlite` (WAL mode), a table of one row. */
export async function minimalDataDir(dataDir: string): Promise<void> {
  await mkdir(join(dataDir, "db"), { recursive: true });
  const db = new Database(join(dataDir, "db", "vellum.sqlite"));
  db.pragma("journal_mode = WAL");
  db.exec("CREATE TABLE note (body TEXT)");
  db.prepare("INSERT INTO note (body) VALUES (?)").run("kept");
  db.close();
}
