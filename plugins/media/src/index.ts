export type { DecodeLimits, DecodeResult, ImageKind } from "./decode/index.js";
export type { MediaItem } from "./library.js";
export type { MediaOptions } from "./options.js";
export { media } from "./plugin.js";
export type { MediaKind } from "./sniff.js";
export type { MediaStore } from "./store.js";
