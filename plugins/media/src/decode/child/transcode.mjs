// @ts-check
import { lstat, readFile, rm } from "node:fs/promises";
import { isAbsolute, resolve, sep } from "node:path";
import sharp from "sharp";
import { checkPngChunks } from "./png-chunks.mjs";
import { Refusal } from "./refusal.mjs";
import { checkSvg } from "./svg-policy.mjs";

/** @typedef {{ maxFramePixels: number, maxTotalPixels: number }} PixelLimits */

/** The libvips loader of each kind. SVG is loaded from a buffer: librsvg then resolves no reference to a file. */
const LOADERS = {
  jpeg: "VipsForeignLoadJpegFile",
  png: "VipsForeignLoadPngFile",
  gif: "VipsForeignLoadNsgifFile",
  webp: "VipsForeignLoadWebpFile",
  svg: "VipsForeignLoadSvgBuffer",
};
/** The loaders that probe the PNG and JPEG images embedded in an SVG. */
const EMBEDDED_LOADERS = ["VipsForeignLoadPngBuffer", "VipsForeignLoadJpegBuffer"];

// One job at a time, nothing cached between jobs, and no loader but these: whatever its content,
// an input is never parsed by the TIFF, HEIF, PDF, raw or any other loader libvips has.
sharp.cache(false);
sharp.concurrency(1);
sharp.block({ operation: ["VipsForeignLoad"] });
sharp.unblock({ operation: [...Object.values(LOADERS), ...EMBEDDED_LOADERS] });

/**
 * The path if it is absolute, normalized and inside the work dir (checked again here: native code is not
 * held by Node's permission model).
 * @param {unknown} path
 * @param {string} workDir
 */
function insideWorkDir(path, workDir) {
  if (typeof path === "string" && isAbsolute(path) && resolve(path) === path && path.startsWith(workDir + sep)) {
    return path;
  }
  throw new Refusal("invalid", `${String(path)} is not inside the work dir`);
}

/**
 * What sharp reads: the input's path (a PNG's chunks checked first), or an SVG's checked text with its
 * embedded images' pixels counted (librsvg decodes them with no limit of its own).
 * @param {string} input
 * @param {keyof typeof LOADERS} kind
 * @param {PixelLimits} limits
 */
async function sourceOf(input, kind, limits) {
  if (kind === "png") checkPngChunks(await readFile(input));
  if (kind !== "svg") return input;
  const bytes = await readFile(input);
  let pixels = 0;
  for (const image of checkSvg(bytes)) {
    const meta = await sharp(image.bytes, { failOn: "error", limitInputPixels: limits.maxFramePixels }).metadata();
    if (meta.format !== image.format) throw new Refusal("invalid", "SVG refused: an embedded image is not its type");
    pixels += meta.width * meta.height;
  }
  if (pixels > limits.maxTotalPixels) throw new Refusal("too_large", `SVG embeds ${pixels} pixels of images`);
  return bytes;
}

/**
 * Re-encodes a job's input to webp at its output: orientation applied, metadata (EXIF, GPS, XMP, ICC)
 * dropped, every frame of an animation kept. The pixel limits are checked on the header, before any
 * pixel is decoded. Resolves with the output's frame size, frames and bytes.
 * @param {{ input: unknown, output: unknown, kind: keyof typeof LOADERS }} job
 * @param {string} workDir
 * @param {PixelLimits} limits
 */
export async function transcode(job, workDir, limits) {
  const input = insideWorkDir(job.input, workDir);
  const output = insideWorkDir(job.output, workDir);
  if (!Object.hasOwn(LOADERS, job.kind)) throw new Refusal("invalid", `unknown image kind ${String(job.kind)}`);
  if (!(await lstat(input)).isFile()) throw new Refusal("invalid", "the input is not a regular file");
  const animated = job.kind === "gif" || job.kind === "webp";
  const image = sharp(await sourceOf(input, job.kind, limits), {
    animated,
    failOn: "error",
    // Animated, sharp applies its limit to all frames stacked: the frames are checked one by one below.
    limitInputPixels: animated ? limits.maxTotalPixels : limits.maxFramePixels,
  });
  const meta = await image.metadata();
  if (meta.format !== job.kind) throw new Refusal("invalid", `the input is ${meta.format}, not ${job.kind}`);
  const frames = animated ? (meta.pages ?? 1) : 1;
  const frame = meta.width * (animated ? (meta.pageHeight ?? meta.height) : meta.height);
  if (frame > limits.maxFramePixels) throw new Refusal("too_large", `a frame of ${frame} pixels`);
  if (frame * frames > limits.maxTotalPixels) throw new Refusal("too_large", `${frames} frames of ${frame} pixels`);
  await rm(output, { force: true }); // a link there is removed, not written through
  const info = await image.rotate().webp().toFile(output);
  return { width: info.width, height: info.pageHeight ?? info.height, frames: info.pages ?? 1, bytes: info.size };
}
