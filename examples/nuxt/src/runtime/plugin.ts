import { defineNitroPlugin } from "nitropack/runtime";
import { closeVellum, useVellum } from "./vellum.js";

// Starts Vellum with the server (a bad config fails at boot, not on the first request) and
// closes it (in-flight requests, jobs, the database) when Nitro closes.
export default defineNitroPlugin((nitroApp) => {
  useVellum().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
  nitroApp.hooks.hook("close", closeVellum);
});
