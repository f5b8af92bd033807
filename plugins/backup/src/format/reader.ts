import { locate, VpbkError } from "./errors.js";
import {
  type DataFrame,
  type FinalFrame,
  FRAME_OVERHEAD_BYTES,
  FRAME_PLAINTEXT_BYTES,
  MAX_SEAL_DELAY_MS,
  readFrames,
} from "./frames.js";
import {
  HEADER_BYTES,
  parseHeader,
  unlockHeader,
  type UnlockedWith,
  type VpbkHeader,
  type VpbkUnlock,
} from "./header.js";
import type { VpbkKeys } from "./keys.js";
import {
  RECORD_SQLITE_DB,
  type RecordEvent,
  type RecordInfo,
  type RecordSummary,
  type VpbkEnd,
  type VpbkManifest,
} from "./records.js";
import { RecordDecoder } from "./record-decoder.js";
import { type ByteSource, openSource, type VpbkSource } from "./source.js";
import type { VpbkWriteSummary } from "./writer.js";

/** How to open an archive: what unlocks it, and an optional progress callback. */
export type OpenVpbkOptions = VpbkUnlock & {
  /** Called after each frame with the archive bytes read so far and the total when known. */
  onProgress?: ((bytesRead: number, totalBytes: number | undefined) => void) | undefined;
  /**
   * The writer's read-after-write check only (§2.6 step 6), and only with a `dataKey` unlock
   * (`E_USAGE` otherwise): FILE and SQLITE_DB content is not hashed again. Every frame, the chain,
   * the record rules, the END totals, the FINAL frame and the trailer are checked as always, and
   * the content root, built from the per-record digests as carried in the authenticated stream, is
   * still compared with the trailer's. That proves the file holds exactly what the writer sealed
   * with this data key; it does not re-prove that each digest matches its content, which a restore
   * or `-verify` does (§2.7 check 7).
   */
  trustContentDigests?: boolean | undefined;
};

/** Metadata common to the records that name a path. */
interface PathRecord {
  /** The record's position in the stream (0 = MANIFEST). */
  index: number;
  /** A path checked by the §2.5 rules: relative, inside the allowlisted folders, no `..`. */
  path: string;
  /** Informational permission bits. */
  mode: number;
  mtimeMs: number;
}

/** A record of an opened archive, from authenticated frames only. */
export type VpbkRecord =
  | { type: "manifest"; index: number; manifest: VpbkManifest }
  | ({ type: "dir" } & PathRecord)
  | ({
      type: "file" | "sqlite-db";
      size: number;
      /**
       * The content, in order. Iterate it (or not) before asking for the next record; the
       * iteration ends normally only if the content matched the record's SHA-256 (`E_RECORD_HASH`
       * otherwise; not hashed with {@link OpenVpbkOptions.trustContentDigests}). Skipped content
       * is still read and checked.
       */
      content: AsyncIterable<Buffer>;
    } & PathRecord)
  | { type: "end"; index: number; end: VpbkEnd };

/** What a fully read archive amounted to (§2.7's success line): what the writer reported, and what unlocked it. */
export interface VpbkSummary extends VpbkWriteSummary {
  unlockedWith: UnlockedWith;
}

/**
 * An unlocked archive. Its {@link records} can be iterated once; every byte they carry comes from
 * a frame whose tag verified, and every path passed the §2.5 rules. The archive is complete and
 * intact only when that iteration **ends normally**: the FINAL frame, the trailer counts, the
 * content root, the seal time and the absence of trailing bytes are checked after the END record
 * is yielded, and any failure throws from the iteration. A restore must move nothing into place
 * before that; after it, {@link summary} is set.
 */
export interface VpbkArchive {
  /** The authenticated header: generation id, created time, KDF parameters. */
  readonly header: VpbkHeader;
  /** Which secret opened it. */
  readonly unlockedWith: UnlockedWith;
  /** The records, in stream order. */
  readonly records: AsyncIterable<VpbkRecord>;
  /** Set once {@link records} ended normally. */
  readonly summary: VpbkSummary | undefined;
  /** Releases the file (done by itself when the iteration ends or fails). */
  close(): Promise<void>;
}

/**
 * Opens a `.vpbk` archive (a path, bytes or a stream of chunks) and unlocks it: §2.7 checks 1–5,
 * the KDF bounds before any Argon2 work. The rest is checked while {@link VpbkArchive.records} is
 * read, with memory bounded by one frame whatever the archive's size.
 */
export async function openVpbk(source: VpbkSource, options: OpenVpbkOptions): Promise<VpbkArchive> {
  if (options.trustContentDigests === true && !("dataKey" in options)) {
    throw new VpbkError("E_USAGE", "trustContentDigests is for the writer's read-after-write check, with its data key");
  }
  const input = await openSource(source);
  try {
    const bytes = Buffer.alloc(HEADER_BYTES);
    const header = parseHeader(bytes.subarray(0, await input.read(bytes, 0, HEADER_BYTES)));
    const { keys, unlockedWith } = await unlockHeader(header, options);
    return new Archive(input, header, keys, unlockedWith, options);
  } catch (error) {
    await input.close();
    throw error;
  }
}

/**
 * An upper bound of the plaintext an archive of `size` bytes can hold: everything after the
 * header, less 32 bytes per frame. §2.7 check 7 refuses a record that declares more than this
 * still allows (`E_RECORD_SIZE`) as soon as its header is read. So an archive shortened by a
 * truncation or a dropped frame may be refused there, before the frame layer reaches the gap
 * (`E_TRUNCATED`, `E_SEQ`…); read as a stream of unknown size, it is always the frame layer. The
 * bound leaves room for the FINAL frame, so a file cut right before it is `E_NO_FINAL`.
 */
export function maxDataBytes(size: number): number {
  const body = size - HEADER_BYTES;
  if (body <= 0) return 0;
  return Math.max(0, body - FRAME_OVERHEAD_BYTES * Math.ceil(body / (FRAME_PLAINTEXT_BYTES + FRAME_OVERHEAD_BYTES)));
}

class Archive implements VpbkArchive {
  readonly header: VpbkHeader;
  readonly unlockedWith: UnlockedWith;
  readonly records: AsyncIterable<VpbkRecord>;
  summary: VpbkSummary | undefined;
  readonly #input: ByteSource;
  readonly #keys: VpbkKeys;
  readonly #onProgress: OpenVpbkOptions["onProgress"];
  readonly #trustContentDigests: boolean;
  #started = false;

  constructor(
    input: ByteSource,
    header: VpbkHeader,
    keys: VpbkKeys,
    unlockedWith: UnlockedWith,
    options: Pick<OpenVpbkOptions, "onProgress" | "trustContentDigests">,
  ) {
    this.#input = input;
    this.header = header;
    this.#keys = keys;
    this.unlockedWith = unlockedWith;
    this.#onProgress = options.onProgress;
    this.#trustContentDigests = options.trustContentDigests === true;
    this.records = {
      [Symbol.asyncIterator]: () => {
        if (this.#started) throw new VpbkError("E_USAGE", "an archive's records can be read once");
        this.#started = true;
        return this.#read();
      },
    };
  }

  close(): Promise<void> {
    return this.#input.close();
  }

  async *#read(): AsyncGenerator<VpbkRecord, void, undefined> {
    const input = this.#input;
    const frames = readFrames(input, this.#keys, HEADER_BYTES);
    const decoder = new RecordDecoder(input.size === undefined ? undefined : maxDataBytes(input.size), {
      trustContentDigests: this.#trustContentDigests,
    });
    let events: RecordEvent[] = [];
    let next = 0;
    let final: FinalFrame | undefined;
    let records: RecordSummary | undefined;
    let dataBytes = 0;
    let pulling = false;

    /** The next record event, reading and authenticating frames as needed; undefined after FINAL. */
    const pull = async (): Promise<RecordEvent | undefined> => {
      if (pulling) throw new VpbkError("E_USAGE", "read a record's content before asking for the next record");
      pulling = true;
      try {
        while (next >= events.length) {
          if (final !== undefined) return undefined;
          const item = await frames.next();
          if (item.done) throw new VpbkError("E_NO_FINAL", "the frames ended without FINAL");
          const frame: DataFrame | FinalFrame = item.value;
          this.#onProgress?.(
            frame.final ? frame.end : frame.offset + FRAME_OVERHEAD_BYTES + frame.plaintext.length,
            input.size,
          );
          if (frame.final) {
            final = frame;
            try {
              records = decoder.finish();
            } catch (error) {
              throw locate(error, frame.index, frame.offset);
            }
            return undefined;
          }
          dataBytes += frame.plaintext.length;
          try {
            events = decoder.write(frame.plaintext);
          } catch (error) {
            throw locate(error, frame.index, frame.offset);
          }
          next = 0;
        }
        return events[next++];
      } finally {
        pulling = false;
      }
    };

    try {
      for (;;) {
        const event = await pull();
        if (event === undefined) break;
        switch (event.kind) {
          case "manifest":
            yield { type: "manifest", index: event.record.index, manifest: event.manifest };
            break;
          case "dir":
            yield { type: "dir", ...pathRecord(event.record) };
            break;
          case "end":
            yield { type: "end", index: event.record.index, end: event.end };
            break;
          case "begin": {
            const state = { verified: false, moved: false };
            yield {
              type: event.record.type === RECORD_SQLITE_DB ? "sqlite-db" : "file",
              size: event.record.size,
              ...pathRecord(event.record),
              content: content(pull, state),
            };
            state.moved = true;
            while (!state.verified) {
              const rest = await pull();
              if (rest === undefined) throw new VpbkError("E_RECORD_SIZE", "the data ends inside a record");
              if (rest.kind === "verified") state.verified = true;
            }
            break;
          }
          default:
            throw new VpbkError("E_RECORD_STRUCTURE", `unexpected ${event.kind} outside a record`);
        }
      }
      // The FINAL frame authenticated and the record stream ended exactly at END (check 7).
      const last = final as FinalFrame;
      const summary = records as RecordSummary;
      // Nothing may follow the FINAL frame (E_TRAILING).
      await frames.next();
      const { trailer } = last;
      const where = { index: last.index, offset: last.offset };
      if (trailer.dataFrames !== last.index || trailer.dataBytes !== dataBytes) {
        throw new VpbkError(
          "E_TRAILER",
          `the FINAL frame counts ${trailer.dataFrames} frames and ${trailer.dataBytes} bytes; ` +
            `the archive has ${last.index} and ${dataBytes}`,
          where,
        );
      }
      if (!trailer.contentRoot.equals(summary.contentRoot)) {
        throw new VpbkError("E_TRAILER", "the content root differs from the records'", where);
      }
      const { createdMs } = this.header;
      if (trailer.sealedMs < createdMs || trailer.sealedMs > createdMs + MAX_SEAL_DELAY_MS) {
        throw new VpbkError(
          "E_TRAILER",
          `sealed_ms ${trailer.sealedMs} is not within 24 h after created_ms ${createdMs}`,
          where,
        );
      }
      this.summary = {
        generationId: this.header.generationId,
        createdMs,
        sealedMs: trailer.sealedMs,
        dataFrames: trailer.dataFrames,
        dataBytes,
        archiveBytes: last.end,
        entries: summary.entries,
        fileBytes: summary.fileBytes,
        contentRoot: summary.contentRoot.toString("hex"),
        unlockedWith: this.unlockedWith,
      };
    } finally {
      await frames.return();
      await input.close();
    }
  }
}

/** The content of the current FILE or SQLITE_DB record, as the decoder releases it. */
async function* content(
  pull: () => Promise<RecordEvent | undefined>,
  state: { verified: boolean; moved: boolean },
): AsyncGenerator<Buffer, void, undefined> {
  if (state.moved) throw new VpbkError("E_USAGE", "a record's content was read after moving to the next record");
  while (!state.verified) {
    const event = await pull();
    if (event === undefined) throw new VpbkError("E_RECORD_SIZE", "the data ends inside a record");
    if (event.kind === "verified") state.verified = true;
    else if (event.kind === "data") yield event.data;
    else throw new VpbkError("E_RECORD_STRUCTURE", `unexpected ${event.kind} inside a record`);
  }
}

function pathRecord(info: RecordInfo): { index: number; path: string; mode: number; mtimeMs: number } {
  return { index: info.index, path: info.path, mode: info.mode, mtimeMs: info.mtimeMs };
}
