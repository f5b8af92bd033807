import { deflateSync } from "node:zlib";
import { crc32 } from "node:zlib";

/** The PNGs uploaded so far: about one upload in five sends one of them again (a duplicate answers 200). */
const sent = [];

function chunk(type, data) {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, "latin1");
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/**
 * A small PNG (48×48, one random colour with a diagonal band), written by hand so the soak's
 * client needs no image library; or, one time in five, one already sent.
 * @param {() => number} random
 */
export function mediaFile(random) {
  if (sent.length > 0 && random() < 0.2) return sent[Math.floor(random() * sent.length)];
  const size = 48;
  const [r, g, b] = [0, 0, 0].map(() => Math.floor(random() * 256));
  const rows = [];
  for (let y = 0; y < size; y++) {
    const row = Buffer.alloc(1 + size * 3);
    for (let x = 0; x < size; x++) row.set(Math.abs(x - y) < 4 ? [255 - r, 255 - g, 255 - b] : [r, g, b], 1 + x * 3);
    rows.push(row);
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const png = Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(Buffer.concat(rows))),
    chunk("IEND", Buffer.alloc(0)),
  ]);
  if (sent.length < 50) sent.push(png);
  return png;
}
