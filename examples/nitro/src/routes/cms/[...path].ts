import { defineHandler, getRequestIP } from "nitro/h3";
import { CMS_PREFIX, useVellum, withoutPrefix } from "../../vellum.js";

// `/cms` and everything under it: Vellum answers, including its own 404s.
export default defineHandler(async (event) => {
  const vellum = await useVellum();
  const clientAddress = getRequestIP(event);
  // Vellum learns the prefix it was mounted under, so its links (Location, media URLs, error
  // `docs`, the CSRF cookie's Path) carry it.
  const options = { mountPrefix: CMS_PREFIX, ...(clientAddress ? { clientAddress } : {}) };
  return vellum.fetch(withoutPrefix(event.req, CMS_PREFIX), options);
});
