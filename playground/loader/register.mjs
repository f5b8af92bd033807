// `node --import ./playground/loader/register.mjs`: lets Node run the repository's TypeScript
// sources (together with `--conditions=vellum-source`). The hooks run on Node's loader thread.
import { register } from "node:module";

register("./hooks.mjs", import.meta.url);
