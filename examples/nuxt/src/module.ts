import { fileURLToPath } from "node:url";
import type { NitroModule } from "nitropack/types";

export interface VellumModuleOptions {
  /** Where Vellum is mounted; it answers everything under it. Default `/cms`. */
  prefix?: string;
}

const runtime = (file: string) => fileURLToPath(new URL(`./runtime/${file}`, import.meta.url));

/** A Nitro (nitropack 2) module: Vellum on `<prefix>` and `<prefix>/**`, started and closed with the server. */
export function vellumNitroModule(options: VellumModuleOptions = {}): NitroModule {
  const prefix = (options.prefix ?? "/cms").replace(/\/+$/, "");
  if (!/^\/[^?#]+$/.test(prefix))
    throw new Error(`vellum: prefix must be a path such as /cms, got ${JSON.stringify(options.prefix)}`);
  return {
    name: "vellum",
    setup(nitro) {
      const ext = import.meta.url.endsWith(".ts") ? ".ts" : ".js";
      const handler = runtime(`handler${ext}`);
      nitro.options.handlers.push({ route: prefix, handler }, { route: `${prefix}/**`, handler });
      nitro.options.plugins.push(runtime(`plugin${ext}`));
    },
  };
}

/** The slice of Nuxt's module API this uses, so the module needs neither `nuxt` nor `@nuxt/kit`. */
interface NuxtLike {
  options: { nitro: { modules?: unknown[] } };
}

/** A Nuxt module (`modules: [[vellum, { prefix: "/cms" }]]` in `nuxt.config.ts`) that adds the Nitro module. */
export default function vellum(options: VellumModuleOptions | undefined, nuxt: NuxtLike): void {
  nuxt.options.nitro.modules = [...(nuxt.options.nitro.modules ?? []), vellumNitroModule(options)];
}
