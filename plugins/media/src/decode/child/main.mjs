// @ts-check
import { reasonOf } from "./refusal.mjs";
import { transcode } from "./transcode.mjs";

/*
 * A decoder child of `DecoderPool`, started by `decoderCommand` (launch.ts) as
 * `main.mjs <work dir> <limits as JSON>`. It answers one job at a time over IPC and dies when the
 * parent goes away. Plain JavaScript so that it runs as is from the sources and from a package.
 */

const [workDir = "", limits = "{}"] = process.argv.slice(2);
const pixelLimits = JSON.parse(limits);

/** @param {{ id: number, job: Parameters<typeof transcode>[0] }} message */
async function answer({ id, job }) {
  try {
    process.send?.({ id, result: await transcode(job, workDir, pixelLimits) });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    process.send?.({ id, error: { reason: reasonOf(error), message } });
  }
}

// Without its parent nobody waits for the job: stop at once (process.exit would wait for it to finish).
process.on("disconnect", () => process.kill(process.pid, "SIGKILL"));
process.on("message", (message) => void answer(/** @type {any} */ (message)));
process.send?.({ ready: true });
