// Module hooks that run TypeScript on Node 20 with the TypeScript compiler the repository already
// has: each .ts file is transpiled on its own (the sources use isolatedModules and
// verbatimModuleSyntax, so no type information is needed). Types are not checked. The output is
// cached by content hash under node_modules/.cache, so a restart transpiles only changed files.
import { createHash } from "node:crypto";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const cacheDir = fileURLToPath(new URL("../../node_modules/.cache/vellum-playground/", import.meta.url));
// A new compiler, or new options below, makes new keys.
const compiler = `typescript ${createRequire(import.meta.url)("typescript/package.json").version}, options 2`;
let typescript;

/** The sources import `./x.js` for `./x.ts` (NodeNext style): from a .ts file, try the .ts first. */
export async function resolve(specifier, context, next) {
  if (!context.parentURL?.endsWith(".ts") || !/^\.\.?\/.*\.js$/.test(specifier)) return next(specifier, context);
  try {
    return await next(`${specifier.slice(0, -3)}.ts`, context);
  } catch (error) {
    if (error?.code !== "ERR_MODULE_NOT_FOUND") throw error;
    return next(specifier, context);
  }
}

export async function load(url, context, next) {
  if (!url.startsWith("file:") || !url.endsWith(".ts")) return next(url, context);
  const source = await readFile(new URL(url), "utf8");
  const key = createHash("sha256").update(compiler).update("\0").update(url).update("\0").update(source).digest("hex");
  const cached = `${cacheDir}${key}.js`;
  const hit = await readFile(cached, "utf8").catch(() => undefined);
  if (hit !== undefined) return { format: "module", source: hit, shortCircuit: true };
  typescript ??= (await import("typescript")).default;
  const { outputText } = typescript.transpileModule(source, {
    fileName: fileURLToPath(url),
    compilerOptions: {
      module: typescript.ModuleKind.ESNext,
      target: typescript.ScriptTarget.ES2023,
      verbatimModuleSyntax: true,
      inlineSourceMap: true,
    },
  });
  await mkdir(cacheDir, { recursive: true });
  const temporary = `${cached}.${process.pid}.tmp`;
  await writeFile(temporary, outputText);
  await rename(temporary, cached);
  return { format: "module", source: outputText, shortCircuit: true };
}
