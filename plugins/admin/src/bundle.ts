import { readFile } from "node:fs/promises";
import { gzipSync } from "node:zlib";

/** A file of the built UI, kept in memory as it is and gzipped (the UI is a few tens of kilobytes). */
export interface UiFile {
  body: Uint8Array<ArrayBuffer>;
  gzip: Uint8Array<ArrayBuffer>;
  type: string;
}

/** The built UI: the names of its script, stylesheet and icon (content-hashed), and the files by name. */
export interface UiBundle {
  script: string;
  style: string;
  icon: string;
  files: ReadonlyMap<string, UiFile>;
}

/** `dist/ui`, from `dist/bundle.js` and from `src/bundle.ts` alike. */
const UI_DIR = new URL("../dist/ui/", import.meta.url);

const TYPES: Record<string, string> = {
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  svg: "image/svg+xml",
};

async function load(name: string): Promise<UiFile> {
  const type = TYPES[name.slice(name.lastIndexOf(".") + 1)];
  if (!type) throw new Error(`the admin UI build names ${name}, which is no script, stylesheet or icon`);
  const body = new Uint8Array(await readFile(new URL(name, UI_DIR)));
  return { body, gzip: new Uint8Array(gzipSync(body, { level: 9 })), type };
}

/**
 * Reads the UI that `scripts/build-ui.mjs` built, through its manifest; undefined, with the reason,
 * when it is not built (a checkout before `npm run build`).
 */
export async function loadUiBundle(): Promise<UiBundle | { missing: string }> {
  let manifest: { script: string; style: string; icon: string };
  try {
    manifest = JSON.parse(await readFile(new URL("manifest.json", UI_DIR), "utf8")) as typeof manifest;
  } catch (error) {
    return { missing: error instanceof Error ? error.message : String(error) };
  }
  const files = new Map<string, UiFile>();
  for (const name of [manifest.script, manifest.style, manifest.icon]) files.set(name, await load(name));
  return { ...manifest, files };
}
