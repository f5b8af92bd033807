import { stat } from "node:fs/promises";
import { glob } from "tinyglobby";

export interface WalkedFile {
  /** Path relative to the walked directory, with forward slashes. */
  path: string;
  bytes: number;
}

/** Every file under `dir` (dotfiles included, links not followed), with its size. */
export async function walkFiles(dir: string, patterns: string[] = ["**/*"]): Promise<WalkedFile[]> {
  const paths = await glob(patterns, { cwd: dir, dot: true, onlyFiles: true, followSymbolicLinks: false });
  const files: WalkedFile[] = [];
  for (const path of paths) {
    const info = await stat(`${dir}/${path}`).catch(() => undefined);
    if (info?.isFile()) files.push({ path, bytes: info.size });
  }
  return files;
}

/** Total bytes of the files under `dir`. */
export async function directoryBytes(dir: string): Promise<number> {
  return (await walkFiles(dir)).reduce((sum, f) => sum + f.bytes, 0);
}
