import { isAbsolute, resolve, sep } from "node:path";
import { DecodeError } from "./errors.js";

/** The formats the pool decodes, as the upload's content sniffing names them. */
export type ImageKind = "jpeg" | "png" | "gif" | "webp" | "svg";

const IMAGE_KINDS: ReadonlySet<string> = new Set<ImageKind>(["jpeg", "png", "gif", "webp", "svg"]);

/** One image to re-encode: both paths absolute, normalized and inside the pool's work dir. */
export interface DecodeJob {
  input: string;
  /** Where the webp goes; replaced if it exists, removed when the decode fails. */
  output: string;
  /** The sniffed kind: an input whose content is another format is refused as `invalid`. */
  kind: ImageKind;
}

/** The output webp: its frame size, its frames (1 unless animated) and its size on disk. */
export interface DecodeResult {
  width: number;
  height: number;
  frames: number;
  bytes: number;
}

/** True for an absolute, normalized path strictly inside `dir` (itself absolute and normalized). */
function isInside(path: string, dir: string): boolean {
  return isAbsolute(path) && resolve(path) === path && path.startsWith(dir + sep);
}

/** Refuses (`invalid`) a job of an unknown kind or with a path outside `workDir`, before any child sees it. */
export function checkJob(job: DecodeJob, workDir: string): void {
  if (!IMAGE_KINDS.has(job.kind)) throw new DecodeError("invalid", `unknown image kind ${String(job.kind)}`);
  for (const path of [job.input, job.output]) {
    if (typeof path !== "string" || !isInside(path, workDir)) {
      throw new DecodeError("invalid", `${String(path)} is not an absolute path inside the decoder work dir`);
    }
  }
  if (job.input === job.output) throw new DecodeError("invalid", "input and output are the same file");
}
