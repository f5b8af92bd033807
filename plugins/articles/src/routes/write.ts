import {
  checkSlug,
  json,
  mountPrefix,
  type PluginRouter,
  pathParam,
  publicPath,
  readJsonBody,
  requestId,
} from "@vellum/core";
import type { ArticleApplier } from "../apply.js";
import { parseCreate, parsePatch } from "../validation.js";
import { createSchema, deleteSchema, updateSchema } from "./schemas.js";
import type { Backpressure } from "../backpressure.js";
import type { CreateIntake } from "../intake.js";
import type { Sanitizer } from "../sanitize.js";

export interface WriteRouteDeps {
  prefix: string;
  applier: ArticleApplier;
  intake: CreateIntake;
  backpressure: Backpressure;
  sanitize: Sanitizer;
}

/**
 * `POST <prefix>` (202 once the queued create is committed), `PUT <prefix>/:slug` (200 with the
 * updated article) and `DELETE <prefix>/:slug` (204). Input is validated and sanitized before
 * anything is written; the kernel has already checked the API key and the CSRF token.
 */
export function registerWriteRoutes(router: PluginRouter, deps: WriteRouteDeps): void {
  const { prefix, applier, intake, backpressure, sanitize } = deps;

  router.post(
    prefix,
    async (event) => {
      const input = parseCreate(await readJsonBody(event));
      await backpressure.admit();
      const id = await intake.create({ ...input, content: sanitize(input.content, mountPrefix(event)) });
      return json(
        { id, status: "queued" },
        { status: 202, headers: { location: publicPath(event, `${prefix}/${input.slug}`) } },
      );
    },
    { schema: createSchema },
  );

  router.put(
    `${prefix}/:slug`,
    async (event) => {
      const slug = checkSlug(pathParam(event, "slug"));
      const patch = parsePatch(await readJsonBody(event));
      if (patch.content !== undefined) patch.content = sanitize(patch.content, mountPrefix(event));
      return json(await applier.update(slug, patch, { requestId: requestId(event) }));
    },
    { schema: updateSchema },
  );

  router.delete(
    `${prefix}/:slug`,
    async (event) => {
      const slug = checkSlug(pathParam(event, "slug"));
      await applier.remove(slug, { requestId: requestId(event) });
      return new Response(null, { status: 204 });
    },
    { schema: deleteSchema },
  );
}
