import { type SettingDeclarations, type SettingProblem, setting } from "@vellum/core";

export interface MediaOptions {
  /** Largest upload in bytes (`MEDIA_MAX_UPLOAD_MB`), never above the quota left. Default 25 MB. */
  maxUploadBytes: number;
  /** Accept PDF, kept as PDF (`MEDIA_ALLOW_PDF`). Default false. */
  allowPdf: boolean;
  /** Largest frame the decoder accepts, in pixels. Default 50 megapixels. */
  maxFramePixels: number;
  /** Most pixels across all frames of an animation. Default 500 megapixels. */
  maxTotalPixels: number;
  /** Decoder processes. Default 2. */
  decoders: number;
  /** Memory of one decoder process, in bytes. Default 1536 MB (a 50-megapixel frame needs about 1.1 GB). */
  decoderMemoryBytes: number;
  /** Milliseconds one decode may take before its process is killed. Default 30 s. */
  decodeTimeoutMs: number;
  /** Age (since its upload) from which an item no article refers to is removed by the orphan cleanup. Default 24 h. */
  orphanAgeMs: number;
}

const MB = 1024 * 1024;
const MEGAPIXEL = 1_000_000;

export const MEDIA_SETTINGS: SettingDeclarations<MediaOptions> = {
  maxUploadBytes: setting.amount({
    env: "MEDIA_MAX_UPLOAD_MB",
    description: "largest upload in megabytes (the storage quota left lowers it further)",
    default: 25 * MB,
    unit: "MB",
    scale: MB,
    max: 4096,
  }),
  allowPdf: setting.boolean({
    env: "MEDIA_ALLOW_PDF",
    description: "accept PDF uploads, stored and served as PDF",
    default: false,
  }),
  maxFramePixels: setting.amount({
    env: "MEDIA_MAX_FRAME_MEGAPIXELS",
    description: "largest image (one frame) the decoder accepts, in megapixels",
    default: 50 * MEGAPIXEL,
    unit: "megapixels",
    scale: MEGAPIXEL,
    max: 1000,
  }),
  maxTotalPixels: setting.amount({
    env: "MEDIA_MAX_TOTAL_MEGAPIXELS",
    description: "most megapixels across all frames of an animation",
    default: 500 * MEGAPIXEL,
    unit: "megapixels",
    scale: MEGAPIXEL,
    max: 10_000,
  }),
  decoders: setting.integer({
    env: "MEDIA_DECODERS",
    description: "decoder processes that re-encode images (each one image at a time)",
    default: 2,
    min: 1,
    max: 32,
  }),
  decoderMemoryBytes: setting.amount({
    env: "MEDIA_DECODER_MEMORY_MB",
    description: "memory of one decoder process, in megabytes; over it the decode fails and the process is replaced",
    default: 1536 * MB,
    unit: "MB",
    scale: MB,
    max: 16_384,
  }),
  decodeTimeoutMs: setting.amount({
    env: "MEDIA_DECODE_TIMEOUT_SECONDS",
    description: "seconds one decode may take before its process is killed",
    default: 30_000,
    unit: "seconds",
    scale: 1000,
    max: 600,
  }),
  orphanAgeMs: setting.amount({
    env: "MEDIA_ORPHAN_HOURS",
    description: "hours after its upload from which a media item no article refers to is removed by the orphan cleanup",
    default: 24 * 3_600_000,
    unit: "hours",
    scale: 3_600_000,
    max: 8760,
  }),
};

const MIN_DECODER_MB = 256;

/** Rules a single setting's range cannot say: a decoder needs room to start, and a decode at least a second. */
export function checkMediaSettings(options: Readonly<MediaOptions>): SettingProblem[] {
  const problems: SettingProblem[] = [];
  if (options.decoderMemoryBytes < MIN_DECODER_MB * MB) {
    problems.push({
      setting: "decoderMemoryBytes",
      message: `must be at least ${MIN_DECODER_MB} MB (a decoder process needs it to start)`,
    });
  }
  if (options.decodeTimeoutMs < 1000)
    problems.push({ setting: "decodeTimeoutMs", message: "must be at least 1 second" });
  return problems;
}
