import { type RouteSchema, Type } from "@vellum/core";
import { MIME_OF } from "./sniff.js";

// What the media routes accept and answer, as the OpenAPI reference documents them. Objects stay
// open (no `additionalProperties: false`). The upload is multipart, streamed and checked by its
// handler; the kernel validates no query or JSON body here.

const TAGS = ["media"];
const Bytes = Type.Integer({ minimum: 0 });
const ULID = "^[0-9A-HJKMNP-TV-Z]{26}$";

const MediaItem = Type.Object({
  id: Type.String({ pattern: ULID, description: "A ULID; the stored file is `<id>.webp` (or `<id>.pdf`)" }),
  url: Type.String({
    description: "`/media/<file>`, absolute when the instance has a base URL (`SERVICE_BASE_URL`)",
  }),
  width: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], {
    description: "The stored image's width in pixels, after its orientation was applied; `null` for a PDF",
  }),
  height: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], {
    description: "The stored image's height in pixels; `null` for a PDF",
  }),
  mime: Type.Enum(Object.values(MIME_OF), { description: "The type sniffed from the uploaded bytes" }),
  bytes: Type.Integer({ minimum: 1, description: "Size of the uploaded bytes (not of the stored file)" }),
  sha256: Type.String({ pattern: "^[0-9a-f]{64}$", description: "Lower-case hex SHA-256 of the uploaded bytes" }),
});

export const uploadSchema: RouteSchema = {
  summary: "Upload an image (or a PDF, when allowed), stored as webp",
  description:
    "Streamed to disk while hashed, typed by its bytes (jpeg, png, gif, webp, svg; pdf with `MEDIA_ALLOW_PDF`), " +
    "decoded and re-encoded in a sandboxed process. Only the first `file` part is read; other fields are ignored. " +
    "The same bytes uploaded again answer the item already stored.",
  tags: TAGS,
  multipart: Type.Object({
    file: Type.String({ format: "binary", description: "The file; its name and declared type are ignored" }),
  }),
  response: {
    201: { description: "A new item was stored", body: MediaItem },
    200: {
      description: "The same bytes were stored before (or are being stored now): the existing item",
      body: MediaItem,
    },
    400: { description: "`validation_failed`: no `file` part, or a malformed multipart body" },
    413: {
      description: "`payload_too_large`: over `MEDIA_MAX_UPLOAD_MB`; answered without reading the rest of the body",
      headers: { Connection: "`close`" },
    },
    415: {
      description:
        "`unsupported_media_type`: not `multipart/form-data` (or no boundary), an empty file, or none of the accepted types",
    },
    422: { description: "`invalid_media`: the decoder refused or failed (the message says why)" },
    503: { description: "`service_unavailable`: the instance is shutting down and the decode was cut short" },
    507: {
      description: "`storage_quota_exceeded`: over what the storage quota has left",
      headers: { Connection: "`close`" },
    },
  },
};

const FILE_HEADERS = {
  "Content-Type": "`image/webp`, or `application/pdf` for a PDF",
  "Cache-Control": "`public, max-age=31536000, immutable`: a file never changes under its name",
  ETag: 'The file name, quoted: `"<id>.webp"`',
  "Accept-Ranges": "`bytes`",
  "Content-Disposition": "A PDF only: `attachment`",
  "Content-Security-Policy": "A PDF only: `sandbox`",
};

export const serveSchema: RouteSchema = {
  summary: "A stored media file (HEAD too), with one byte range at most",
  description:
    "Streamed from disk, cached for a year. `If-None-Match` with the ETag answers 304; one `Range` answers 206 " +
    "(honouring `If-Range` with the ETag); several ranges, another unit or a range past the end get the whole file.",
  tags: TAGS,
  params: Type.Object({
    file: Type.String({
      pattern: "^[0-9A-HJKMNP-TV-Z]{26}\\.(webp|pdf)$",
      description: "The stored file's name, `<id>.webp` or `<id>.pdf`, as the item's `url` ends",
    }),
  }),
  response: {
    200: {
      description: "The whole file: `image/webp` (a PDF is `application/pdf`)",
      type: "image/webp",
      headers: { ...FILE_HEADERS, "Content-Length": "The file's size" },
    },
    206: {
      description: "The one range the `Range` header asked for",
      type: "image/webp",
      headers: {
        ...FILE_HEADERS,
        "Content-Length": "The range's size",
        "Content-Range": "`bytes <first>-<last>/<size>`",
      },
    },
    304: { description: "`If-None-Match` holds the ETag: no body", headers: FILE_HEADERS },
    404: { description: "No such media file (or a name not of the stored form)" },
  },
};

export const cleanupSchema: RouteSchema = {
  summary: "Remove media no article refers to, uploaded more than MEDIA_ORPHAN_HOURS ago",
  description:
    "An item is an orphan when no stored article's content contains `/media/<its file>`. Without the articles plugin " +
    "nothing is an orphan. The scheduler also runs this daily.",
  tags: TAGS,
  response: {
    200: {
      description: "What the cleanup removed",
      body: Type.Object({
        removed: Type.Integer({ minimum: 0, description: "Items removed" }),
        bytes_freed: Bytes,
      }),
    },
  },
};
