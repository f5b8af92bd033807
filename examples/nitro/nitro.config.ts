import { defineNitroConfig } from "nitro/config";

export default defineNitroConfig({
  srcDir: "src",
  compatibilityDate: "2026-01-01",
});
