import { createVellum, loadOrCreateSecret, prepareDataDir, resolvePlugins, type Vellum } from "@vellum/core";
import { listen, type VellumServer } from "@vellum/core/node";
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
        server = await listen(vellum, { port: config.port, host: config.host, signals: ctx.signals ?? true });
      } catch (error) {
        await vellum
          ?.close()
          .catch((closeError: unknown) => ctx.logger.debug("close after a failed start:", closeError));
        // The kernel closes the store it was given; without a kernel (createVellum threw) this does,
        // or the open Redis client would keep the process alive.
        if (!vellum) await rateLimitStore?.close?.();
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
