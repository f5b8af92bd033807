import { mkdtemp, realpath, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DecodeError, DecoderPool, type ImageKind } from "../src/decode/index.js";
import {
  animatedGif,
  grayPng,
  manyFrameGif,
  noisyJpeg,
  orientedJpegWithGps,
  png,
  svg,
  withBrokenCrc,
} from "./fixtures/images.js";

let workDir: string;
let pool: DecoderPool;
let counter = 0;

/** Writes `bytes` into the work dir and decodes them as `kind`; resolves with the result and the output's path. */
async function decode(bytes: Buffer, kind: ImageKind) {
  const name = `image-${++counter}`;
  const input = join(workDir, name);
  const output = join(workDir, `${name}.webp`);
  await writeFile(input, bytes);
  return { result: await pool.decode({ input, output, kind }), output };
}

async function reasonOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(error).toBeInstanceOf(DecodeError);
  return (error as DecodeError).reason;
}

beforeAll(async () => {
  workDir = await realpath(await mkdtemp(join(tmpdir(), "vellum-decode-")));
  pool = new DecoderPool({ size: 2, workDir });
});

afterAll(async () => {
  await pool?.close();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

describe("decoder pool: re-encoding", () => {
  it("applies the EXIF orientation of a JPEG and drops its EXIF, GPS, XMP and ICC profile", async () => {
    const jpeg = await orientedJpegWithGps();
    const before = await sharp(jpeg).metadata();
    expect(before).toMatchObject({ width: 60, height: 20, orientation: 6 });
    expect(before.exif?.indexOf(Buffer.from([0x25, 0x88]))).toBeGreaterThan(0); // the GPS IFD, tag 0x8825 (LE)
    expect(before.xmp).toBeDefined();
    expect(before.icc).toBeDefined();

    const { result, output } = await decode(jpeg, "jpeg");
    expect(result).toMatchObject({ width: 20, height: 60, frames: 1 });
    const after = await sharp(output).metadata();
    expect(after).toMatchObject({ format: "webp", width: 20, height: 60 });
    expect(after.orientation).toBeUndefined();
    expect(after.exif).toBeUndefined();
    expect(after.xmp).toBeUndefined();
    expect(after.icc).toBeUndefined();
  });

  it("re-encodes a PNG to a webp of the same size, reporting the output's bytes", async () => {
    const { result, output } = await decode(await png(300, 200), "png");
    const after = await sharp(output).metadata();
    expect(after).toMatchObject({ format: "webp", width: 300, height: 200 });
    expect(result).toEqual({ width: 300, height: 200, frames: 1, bytes: (await stat(output)).size });
  });

  it("keeps every frame of an animated GIF, reporting the frame size", async () => {
    const { result, output } = await decode(await animatedGif(["red", "green", "blue", "white"]), "gif");
    expect(result).toMatchObject({ width: 40, height: 30, frames: 4 });
    const after = await sharp(output, { animated: true }).metadata();
    expect(after).toMatchObject({ format: "webp", width: 40, pageHeight: 30, pages: 4 });
  });

  it("rasterizes a plain SVG, embedded PNG included", async () => {
    const dot = (await png(2, 2, "#00ff00")).toString("base64");
    const image = svg(
      `<defs><linearGradient id="g"><stop offset="0" stop-color="red"/></linearGradient></defs>` +
        `<rect width="20" height="10" fill="url(#g)"/><use href="#g"/>` +
        `<image href="data:image/png;base64,${dot}" width="4" height="4"/>`,
      '<?xml version="1.0" encoding="UTF-8"?>\n<!-- a comment -->\n',
    );
    const { result, output } = await decode(image, "svg");
    expect(result).toMatchObject({ width: 20, height: 10, frames: 1 });
    const { data } = await sharp(output).raw().toBuffer({ resolveWithObject: true });
    const [red = 0, green = 0, blue = 0] = data; // lossy webp: about green
    expect(green).toBeGreaterThan(200);
    expect(red + blue).toBeLessThan(60);
  });
});

describe("decoder pool: refusals", () => {
  it("refuses a 50,000×50,000 PNG from its header, before decoding", async () => {
    const started = performance.now();
    expect(await reasonOf(decode(grayPng(50_000, 50_000, 1), "png"))).toBe("too_large");
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it("refuses an animation whose frames add up to more than maxTotalPixels", async () => {
    // 3,000 frames of 1000×1000: 3 gigapixels in 60 kB.
    expect(await reasonOf(decode(manyFrameGif(3000, 1000, 1000), "gif"))).toBe("too_large");
  });

  it("refuses a truncated JPEG and a PNG with a broken CRC", async () => {
    const jpeg = await noisyJpeg(64, 64);
    expect(await reasonOf(decode(jpeg.subarray(0, jpeg.length / 2), "jpeg"))).toBe("invalid");
    expect(await reasonOf(decode(withBrokenCrc(await png(64, 64)), "png"))).toBe("invalid");
  });

  it("refuses an image that is not the kind its bytes were sniffed as, and formats it does not decode", async () => {
    expect(await reasonOf(decode(await png(8, 8), "jpeg"))).toBe("invalid");
    const tiff = await sharp({ create: { width: 8, height: 8, channels: 3, background: "red" } })
      .tiff()
      .toBuffer();
    expect(await reasonOf(decode(tiff, "jpeg"))).toBe("invalid");
  });

  it.each([
    ["a script", svg('<script>alert(1)</script><rect width="1" height="1"/>')],
    ["a foreignObject", svg("<foreignObject><p>hi</p></foreignObject>")],
    ["an http image", svg('<image href="http://127.0.0.1/x.png" width="4" height="4"/>')],
    ["a file: image", svg('<image xlink:href="file:///etc/passwd" width="4" height="4"/>')],
    ["a relative image", svg('<image href="other-upload.png" width="4" height="4"/>')],
    ["an href behind text that looks like an attribute", svg('<text>x="</text><image href="file:///etc/passwd"/>')],
    ["a file: url()", svg('<rect width="4" height="4" fill="url(file:///etc/passwd#x)"/>')],
    ["a CSS @import", svg('<style>@import "http://127.0.0.1/x.css";</style>')],
    ["a CSS escape", svg("<style>rect { fill: u\\72l(http://127.0.0.1/x) }</style>")],
    ["an embedded SVG", svg(`<image href="data:image/svg+xml;base64,${btoa("<svg/>")}"/>`)],
    ["a stylesheet instruction", svg("", '<?xml-stylesheet href="file:///etc/passwd"?>')],
    ["an external entity", svg("<text>&x;</text>", '<!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]>')],
    [
      "entity expansion",
      svg("<text>&b;</text>", '<!DOCTYPE svg [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]>'),
    ],
    ["a UTF-16 declaration", svg("", '<?xml version="1.0" encoding="UTF-16"?>')],
    ["a root outside the SVG namespace", Buffer.from('<svg width="4" height="4"><rect width="4" height="4"/></svg>')],
    ["another root element", Buffer.from('<html xmlns="http://www.w3.org/1999/xhtml"><svg/></html>')],
    ["plain text", Buffer.from("just text")],
  ])("refuses an SVG with %s", async (_what, image) => {
    expect(await reasonOf(decode(image, "svg"))).toBe("invalid");
  });

  it("refuses an SVG embedding a PNG bomb", async () => {
    const bomb = grayPng(50_000, 50_000, 1).toString("base64");
    expect(
      await reasonOf(decode(svg(`<image href="data:image/png;base64,${bomb}" width="4" height="4"/>`), "svg")),
    ).toBe("too_large");
  });

  it("refuses paths outside the work dir, and an input that is a link", async () => {
    const inside = join(workDir, "x.webp");
    expect(await reasonOf(pool.decode({ input: "/etc/passwd", output: inside, kind: "png" }))).toBe("invalid");
    expect(await reasonOf(pool.decode({ input: `${workDir}/../x.png`, output: inside, kind: "png" }))).toBe("invalid");
    expect(await reasonOf(pool.decode({ input: inside, output: join(tmpdir(), "x.webp"), kind: "png" }))).toBe(
      "invalid",
    );
    const outside = join(tmpdir(), `vellum-decode-outside-${process.pid}.png`);
    await writeFile(outside, await png(4, 4));
    const link = join(workDir, "link.png");
    await symlink(outside, link);
    try {
      expect(await reasonOf(pool.decode({ input: link, output: inside, kind: "png" }))).toBe("invalid");
    } finally {
      await rm(outside, { force: true });
    }
  });
});
