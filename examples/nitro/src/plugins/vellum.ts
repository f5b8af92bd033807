import { defineNitroPlugin } from "nitro/runtime";
import { closeVellum, useVellum } from "../vellum.js";

// Start Vellum with the server (a bad config fails at boot, not on the first request) and
// close it (in-flight requests, jobs, the database) when Nitro shuts down.
export default defineNitroPlugin((nitroApp) => {
  useVellum().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
  nitroApp.hooks.hook("close", closeVellum);
});
