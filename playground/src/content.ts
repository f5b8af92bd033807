import { crc32, deflateSync } from "node:zlib";

/** The demo articles. `{image}` in a content is replaced with the seeded image's URL. */
export const articles = [
  {
    slug: "welcome",
    title: "Welcome to the Vellum playground",
    tags: ["intro"],
    content:
      '<p>This instance was seeded by <code>playground/src/seed.ts</code>.</p><figure><img src="{image}" alt="A blue square" /><figcaption>An image uploaded through <code>POST /api/v1/media</code>.</figcaption></figure>',
  },
  {
    slug: "writing-articles",
    title: "Writing articles",
    tags: ["guide", "articles"],
    content:
      "<p>Create with <code>POST /api/v1/articles</code>, edit with <code>PUT</code>, remove with <code>DELETE</code>.</p>",
  },
  {
    slug: "tags-and-search",
    title: "Tags and search",
    tags: ["guide", "search"],
    content:
      "<p>List by tag with <code>?tag=guide</code>, or search the text with <code>/api/v1/search?q=tags</code>.</p>",
  },
  {
    slug: "media-uploads",
    title: "Media uploads",
    tags: ["guide", "media"],
    content: "<p>Uploads are re-encoded to WebP and served under <code>/media/</code>.</p>",
  },
  {
    slug: "keys-and-csrf",
    title: "API keys and CSRF tokens",
    tags: ["security"],
    content: "<p>Writes need the bearer key and a CSRF token from <code>GET /api/v1/csrf</code>.</p>",
  },
];

/** A solid `width`×`height` RGB PNG, made without an image library. */
export function solidPng(width: number, height: number, [r, g, b]: [number, number, number]): Buffer {
  const row = Buffer.alloc(1 + width * 3); // filter byte 0, then the pixels
  for (let x = 0; x < width; x++) row.set([r, g, b], 1 + x * 3);
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8 bits, RGB, deflate, no filter method, no interlace
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
    const framed = Buffer.alloc(body.length + 8);
    framed.writeUInt32BE(data.length, 0);
    body.copy(framed, 4);
    framed.writeUInt32BE(crc32(body), body.length + 4);
    return framed;
  };
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(Buffer.concat(Array.from({ length: height }, () => row)))),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}
