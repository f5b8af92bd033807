import {
  createVellum,
  loadOrCreateSecret,
  prepareDataDir,
  type RateLimitStore,
  resolvePlugins,
  type Vellum,
} from "@vellum/core";
import { type Listenable, listen, type VellumServer } from "@vellum/core/node";
import { defineCommand } from "citty";
import { ensureApiKey } from "../api-key.js";
import type { CliContext } from "../cli-context.js";
import { counterStore } from "../counter-store.js";
import { watchLauncher } from "../launcher.js";
import { loadSettings, toVellumConfig } from "../settings.js";
import { addressArgs, addressFlags } from "./args.js";

/** `vellum serve`: checks the configuration, starts every plugin and listens until SIGTERM/SIGINT. */
export function serveCommand(ctx: CliContext) {
  return defineCommand({
    meta: { name: "serve", description: "Start the HTTP server (runs pending migrations first)" },
    args: addressArgs,
    async run({ args }) {
      const settings = await loadSettings(ctx, addressFlags(args));
      const { config } = settings;
      // Before the key and secrets are written into the data dir: a plugin may restore it first.
      await prepareDataDir(resolvePlugins(settings.plugins), toVellumConfig(settings, ctx), ctx.logger);
      const { key } = await ensureApiKey({
        configured: config.security?.apiKey,
        dataDir: config.dataDir,
        announce: ctx.print,
      });
      const csrfSecret = config.security?.csrfSecret ?? (await loadOrCreateSecret(config.dataDir, "csrf-secret"));
      const vellumConfig = toVellumConfig(settings, ctx, { apiKey: key, csrfSecret });
      const rateLimitStore = counterStore(config.redisUrl, ctx.logger);
      if (rateLimitStore) vellumConfig.security = { ...vellumConfig.security, rateLimitStore };
      let vellum: Vellum | undefined;
      let server: VellumServer;
      try {
        vellum = createVellum(vellumConfig);
        await vellum.ready();
        server = await listen(closingStore(vellum, rateLimitStore), {
          port: config.port,
          host: config.host,
          signals: ctx.signals ?? true,
        });
      } catch (error) {
        await vellum
          ?.close()
          .catch((closeError: unknown) => ctx.logger.debug("close after a failed start:", closeError));
        // Also when createVellum threw or a close step before the store's failed: an open Redis
        // client would keep the process alive.
        await rateLimitStore?.close?.();
        throw error;
      }
      ctx.logger.ready(`vellum ${ctx.version} listening on ${server.url} (data directory ${config.dataDir})`);
      if (ctx.signals ?? true) {
        watchLauncher((reason) => {
          ctx.logger.info(`shutting down: ${reason}`);
          void server.close().finally(() => {
            ctx.logger.info("shutdown complete");
            process.exit(0);
          });
        });
      }
      ctx.onListen?.(server);
    },
  });
}

/**
 * `vellum`, whose close also closes the counter store. The kernel closes the store after its other
 * close steps, so not when one of them fails; a Redis client left open would keep the process alive.
 */
function closingStore(vellum: Vellum, store: RateLimitStore | undefined): Listenable {
  return {
    ready: () => vellum.ready(),
    close: () => vellum.close().finally(() => store?.close?.()),
    get handler() {
      return vellum.handler;
    },
  };
}
