import { open } from "node:fs/promises";
import { fileTypeFromFile } from "file-type";

/** What an upload's bytes are, as far as the allowlist goes. */
export type MediaKind = "jpeg" | "png" | "gif" | "webp" | "svg" | "pdf";

export const MIME_OF: Record<MediaKind, string> = {
  jpeg: "image/jpeg",
  png: "image/png",
  gif: "image/gif",
  webp: "image/webp",
  svg: "image/svg+xml",
  pdf: "application/pdf",
};

const BY_MIME = new Map(Object.entries(MIME_OF).map(([kind, mime]) => [mime, kind as MediaKind]));

/** How much of a text file is read to find the `<svg` root (after an XML declaration, comments, whitespace). */
const SVG_HEAD_BYTES = 4096;
/**
 * Optional BOM, XML declaration, comments, a document type (an internal subset too: the decoder
 * refuses it, as an SVG that is dangerous rather than as something else) and whitespace, then the
 * root element.
 */
const SVG_HEAD =
  /^\uFEFF?\s*(<\?xml[^>]*\?>\s*)?(<!--[\s\S]*?-->\s*)*(<!DOCTYPE[^>[]*(\[[\s\S]*?\])?\s*>\s*)?(<!--[\s\S]*?-->\s*)*<svg[\s>/]/;

async function looksLikeSvg(path: string): Promise<boolean> {
  const handle = await open(path, "r");
  try {
    const buffer = Buffer.alloc(SVG_HEAD_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, SVG_HEAD_BYTES, 0);
    let text: string;
    try {
      // `fatal`: a binary file is not text; a multi-byte character cut at the end is tolerated.
      text = new TextDecoder("utf-8", { fatal: true }).decode(buffer.subarray(0, bytesRead), { stream: true });
    } catch {
      return false;
    }
    return SVG_HEAD.test(text);
  } finally {
    await handle.close();
  }
}

/**
 * The kind of the file at `path`, decided by its bytes only (never its name or declared type):
 * `file-type`'s magic numbers for the binary formats, and the root element for SVG, which is
 * text (whether it really is an SVG, and a safe one, the decoder decides). Undefined when it is
 * none of the allowlist (a PDF counts only when `allowPdf`).
 */
export async function sniffKind(path: string, allowPdf: boolean): Promise<MediaKind | undefined> {
  const detected = await fileTypeFromFile(path);
  // An SVG with an XML declaration is XML to `file-type`: whether it is an SVG, its root says.
  if (detected && detected.mime !== "application/xml") {
    const kind = BY_MIME.get(detected.mime);
    if (kind === "svg" || (kind === "pdf" && !allowPdf)) return undefined;
    return kind;
  }
  return (await looksLikeSvg(path)) ? "svg" : undefined;
}
