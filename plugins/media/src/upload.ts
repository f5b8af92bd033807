import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { ApiError, type H3Event, requestBodyStream, ulidFactory, validationFailed } from "@vellum/core";
import busboy from "busboy";

const nextUploadId = ulidFactory();

/** An upload received whole into a temporary file. */
export interface ReceivedUpload {
  /** The temporary file, in the decoders' work dir; the caller removes it. */
  path: string;
  bytes: number;
  /** Lower-case hex SHA-256 of the bytes. */
  sha256: string;
}

export interface UploadLimit {
  /** Most bytes accepted. */
  maxBytes: number;
  /** Whether the storage quota left, rather than `MEDIA_MAX_UPLOAD_MB`, set `maxBytes`: 507 instead of 413. */
  quotaBound: boolean;
}

const FIELD = "file";

function overLimit(limit: UploadLimit): ApiError {
  // The rest of the body is not read: the connection closes after the answer.
  const headers = { connection: "close" };
  return limit.quotaBound
    ? new ApiError(
        "storage_quota_exceeded",
        `The upload is over the ${limit.maxBytes} bytes the storage quota leaves.`,
        {
          headers,
        },
      )
    : new ApiError("payload_too_large", `The upload is over the ${limit.maxBytes} byte limit.`, { headers });
}

/**
 * Streams the `file` part of a `multipart/form-data` request (busboy) into a temporary file in
 * `dir` while hashing it, never holding it in memory. It stops at `limit`: the file is removed and
 * 413 (or 507 when the quota set the limit) answered. A client that goes away mid-upload leaves no
 * file behind. Other fields are ignored; a request without a `file` part is 400.
 */
export async function receiveUpload(event: H3Event, dir: string, limit: UploadLimit): Promise<ReceivedUpload> {
  const contentType = event.req.headers.get("content-type") ?? "";
  if (!/^multipart\/form-data\s*;/i.test(contentType)) {
    throw new ApiError("unsupported_media_type", "Send the upload as multipart/form-data with the field 'file'.");
  }
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: { "content-type": contentType },
      limits: { files: 1, fileSize: limit.maxBytes, fields: 20, fieldSize: 1024, parts: 40, headerPairs: 50 },
    });
  } catch {
    throw new ApiError("unsupported_media_type", "The multipart/form-data boundary is missing or malformed.");
  }
  const path = join(dir, `upload-${nextUploadId()}`);
  const source = requestBodyStream(event);
  try {
    return await new Promise<ReceivedUpload>((resolve, reject) => {
      let received: Promise<ReceivedUpload> | undefined;
      parser.on("file", (name, file) => {
        if (name !== FIELD || received) {
          file.resume();
          return;
        }
        received = writeHashed(file, path, limit);
        // Over the limit: answer at once, without reading the rest of the body.
        received.catch(reject);
      });
      parser.on("error", (error: Error) =>
        reject(new ApiError("validation_failed", `The multipart body is malformed: ${error.message}.`)),
      );
      parser.on("close", () => {
        if (!received) reject(validationFailed([{ field: FIELD, message: "is required (a file part)" }]));
        else received.then(resolve, reject);
      });
      // The client went away: nobody reads the answer, but it is the client's doing, not a server error.
      const cutShort = () => reject(new ApiError("validation_failed", "The upload was cut short by the client."));
      source.on("error", cutShort);
      source.on("close", () => {
        if ((source as { complete?: boolean }).complete === false) cutShort();
      });
      source.pipe(parser);
    });
  } catch (error) {
    source.unpipe(parser);
    await rm(path, { force: true });
    throw error;
  }
}

async function writeHashed(file: NodeJS.ReadableStream & { truncated?: boolean }, path: string, limit: UploadLimit) {
  const hash = createHash("sha256");
  let bytes = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  let truncated = false;
  file.on("limit", () => {
    truncated = true;
  });
  await pipeline(file, tap, createWriteStream(path, { flags: "wx", mode: 0o600 }));
  if (truncated) throw overLimit(limit);
  return { path, bytes, sha256: hash.digest("hex") };
}
