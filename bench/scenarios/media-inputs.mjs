import { crc32 } from "node:zlib";
import sharp from "sharp";
import { rng } from "../search/corpus.mjs";

/**
 * @typedef {object} MediaInput
 * @property {string} name e.g. "12 MP JPEG"
 * @property {string} filename
 * @property {string} mime
 * @property {number} width
 * @property {number} height
 * @property {Buffer} bytes the image as generated
 * @property {(tag: string) => Buffer} variant the same image with `tag` in a comment: distinct bytes, same pixels
 */

/**
 * Raw RGB pixels with something in them for an encoder to work on: gradients and waves, a few hundred
 * translucent rectangles and ellipses with hard edges over them, then per-pixel noise (±12) over
 * everything, as a sensor gives. Seeded: the same arguments give the same pixels.
 * @param {number} width
 * @param {number} height
 * @param {number} seed
 * @returns {Buffer}
 */
function picture(width, height, seed) {
  const random = rng(seed);
  const pixels = new Uint8ClampedArray(width * height * 3);
  let i = 0;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      pixels[i++] = (x / width) * 200 + 30 * Math.sin(y / 37);
      pixels[i++] = (y / height) * 180 + 30 * Math.sin(x / 53);
      pixels[i++] = 120 + 60 * Math.sin((x + y) / 91);
    }
  }
  for (let n = 0; n < 300; n++) {
    const [cx, cy] = [random() * width, random() * height];
    const [rx, ry] = [(0.01 + random() * 0.08) * width, (0.01 + random() * 0.08) * width];
    const colour = [random() * 255, random() * 255, random() * 255];
    const alpha = 0.2 + random() * 0.6;
    const ellipse = n % 3 !== 0;
    for (let y = Math.max(0, Math.floor(cy - ry)); y < Math.min(height, cy + ry); y++) {
      for (let x = Math.max(0, Math.floor(cx - rx)); x < Math.min(width, cx + rx); x++) {
        if (ellipse && ((x - cx) / rx) ** 2 + ((y - cy) / ry) ** 2 > 1) continue;
        const at = (y * width + x) * 3;
        for (let c = 0; c < 3; c++) pixels[at + c] += alpha * (colour[c] - pixels[at + c]);
      }
    }
  }
  for (let at = 0; at < pixels.length; at += 3) {
    const noise = (random() - 0.5) * 24;
    for (let c = 0; c < 3; c++) pixels[at + c] += noise;
  }
  return Buffer.from(pixels.buffer);
}

/** A JPEG with a COM segment holding `tag` right after SOI. */
function jpegWithComment(bytes, tag) {
  const text = Buffer.from(tag, "latin1");
  const segment = Buffer.alloc(4 + text.length);
  segment.writeUInt16BE(0xfffe, 0);
  segment.writeUInt16BE(2 + text.length, 2);
  text.copy(segment, 4);
  return Buffer.concat([bytes.subarray(0, 2), segment, bytes.subarray(2)]);
}

const PNG_AFTER_IHDR = 8 + 4 + 4 + 13 + 4;

/** A PNG with a `tEXt` chunk (keyword "Comment") holding `tag` right after IHDR, its CRC right. */
function pngWithComment(bytes, tag) {
  if (bytes.toString("latin1", 12, 16) !== "IHDR") throw new Error("the PNG does not start with IHDR");
  const data = Buffer.from(`Comment\0${tag}`, "latin1");
  const chunk = Buffer.alloc(12 + data.length);
  chunk.writeUInt32BE(data.length, 0);
  chunk.write("tEXt", 4, "latin1");
  data.copy(chunk, 8);
  chunk.writeUInt32BE(crc32(chunk.subarray(4, 8 + data.length)), 8 + data.length);
  return Buffer.concat([bytes.subarray(0, PNG_AFTER_IHDR), chunk, bytes.subarray(PNG_AFTER_IHDR)]);
}

/**
 * The scenario's two inputs: a 12-megapixel JPEG (4000×3000, quality 90, as a camera or phone
 * gives) and a 2000×2000 PNG (4 megapixels, RGB, not interlaced).
 * @returns {Promise<MediaInput[]>}
 */
export async function mediaInputs() {
  const photo = picture(4000, 3000, 14);
  const still = picture(2000, 2000, 41);
  const jpeg = await sharp(photo, { raw: { width: 4000, height: 3000, channels: 3 } })
    .jpeg({ quality: 90 })
    .toBuffer();
  const png = await sharp(still, { raw: { width: 2000, height: 2000, channels: 3 } })
    .png()
    .toBuffer();
  return [
    {
      name: "12 MP JPEG",
      filename: "photo.jpg",
      mime: "image/jpeg",
      width: 4000,
      height: 3000,
      bytes: jpeg,
      variant: (tag) => jpegWithComment(jpeg, tag),
    },
    {
      name: "4 MP PNG",
      filename: "still.png",
      mime: "image/png",
      width: 2000,
      height: 2000,
      bytes: png,
      variant: (tag) => pngWithComment(png, tag),
    },
  ];
}
