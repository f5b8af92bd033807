import { ai } from "../checks/ai.js";
import { ethics } from "../checks/ethics.js";
import { security } from "../checks/security.js";
import type { Inspector } from "../inspector.js";
import { json } from "../respond.js";
import { aiSchema, ethicsSchema, migrationsSchema, securitySchema } from "./schemas.js";

const plain = { auth: "none" } as const;

/** `/health/migrations`, `/health/ethics`, `/health/security` and `/health/ai`. */
export function registerGovernanceRoutes(inspector: Inspector): void {
  const { ctx } = inspector;

  ctx.router.get(
    "/health/migrations",
    async () => {
      const { state, ...rest } = await inspector.migrations();
      return json({ status: state, ...rest }, state === "unavailable" ? 503 : 200);
    },
    { ...plain, schema: migrationsSchema },
  );

  ctx.router.get(
    "/health/ethics",
    async () => {
      const components = await inspector.components();
      const claims = new Map([...components].map(([name, result]) => [name, result.ethics]));
      return json(
        ethics({
          routes: ctx.kernel.routes(),
          environment: inspector.options.environment ?? process.env,
          execArgv: process.execArgv,
          metricsOwner: ctx.name,
          claims,
        }),
      );
    },
    { ...plain, schema: ethicsSchema },
  );

  ctx.router.get("/health/security", async () => json(await security(ctx.kernel)), {
    ...plain,
    schema: securitySchema,
  });

  ctx.router.get(
    "/health/ai",
    async () => {
      const body = ai({
        features: ctx.features,
        routes: ctx.kernel.routes(),
        component: await inspector.component("ai"),
      });
      return json(body, body.status === "unavailable" ? 503 : 200);
    },
    { ...plain, schema: aiSchema },
  );
}
