import { databasePath, definePlugin, sql } from "@vellum/core";
import { backupCommand } from "./commands/backup-command.js";
import { drillCommand } from "./commands/drill-command.js";
import { restoreCommand } from "./commands/restore-command.js";
import { backupComponent } from "./component.js";
import { prepareBackupDataDir } from "./operations/restore-from.js";
import { BACKUP_SETTINGS, type BackupOptions, backupsEnabled, checkBackupSettings } from "./options.js";
import { registerBackupRoutes } from "./routes.js";
import { ServeLock } from "./serve-lock.js";
import { BackupService } from "./service.js";

/** How often the running service looks at the schedule: a fifth of the interval, from 0.2 s to 10 s. */
const tickMs = (intervalMs: number) => Math.min(10_000, Math.max(200, Math.floor(intervalMs / 5)));

/**
 * Backups (seed: Command-line operations and backup rules; backup-format.md): encrypted `.vpbk`
 * generations of the live data dir, on an adaptive schedule with retention and restore drills
 * while the service runs, and the `backup`, `restore` and `drill` commands, which run offline:
 * none of them opens the data dir through the kernel, so a restore never races the database it
 * replaces. Its `prepare` step finishes an interrupted restore and honours SERVICE_RESTORE_FROM
 * before anything opens the data dir.
 */
export const backup = definePlugin<BackupOptions>({
  name: "backup",
  settings: BACKUP_SETTINGS,
  checkSettings: (options, { dataDir }) => checkBackupSettings(options, dataDir),
  commands: {
    backup: {
      description: "write one encrypted generation of the live data dir into BACKUP_TARGET and print its path",
      options: { quiet: { description: "print nothing but the generation's path" } },
      run: backupCommand,
    },
    restore: {
      description:
        "verify a generation (-in F -verify), or restore one into a data dir (-in F -dest D, --at T -dest D)",
      options: {
        in: {
          value: "file|dir",
          description: "the generation to verify or restore; with --at, the directory to pick from",
        },
        verify: {
          description: "check the passphrase, every frame, the chain, the FINAL frame and every digest; write nothing",
        },
        deep: {
          description:
            "with -verify: also open the database image in memory for PRAGMA integrity_check and foreign_key_check (memory: the database's size)",
        },

        dest: {
          value: "dir",
          description: "the data dir to restore into; the previous one is kept as <dir>.replaced-<stamp>",
        },
        at: {
          value: "time",
          description: "RFC 3339 time with an offset: the newest generation sealed at or before it",
        },
        quiet: { description: "print nothing but the result" },
      },
      run: restoreCommand,
    },
    drill: {
      description:
        "restore the newest generation into a scratch dir and check it (integrity, content root, row counts)",
      run: drillCommand,
    },
  },
  prepare: prepareBackupDataDir,
  setup(ctx) {
    const options = ctx.options;
    const service = backupsEnabled(options)
      ? new BackupService({
          dataDir: ctx.dataDir,
          databasePath: databasePath(ctx.config),
          options,
          logger: ctx.logger,
          writeMark: async () => {
            const { rows } = await sql<{ changes: number }>`SELECT total_changes() AS changes`.execute(ctx.db);
            const version = await sql<{ data_version: number }>`PRAGMA data_version`.execute(ctx.db);
            return `${rows[0]?.changes}:${version.rows[0]?.data_version}`;
          },
        })
      : undefined;
    const lock = new ServeLock(ctx.dataDir);
    ctx.onStart(() => lock.take());
    ctx.onClose(async () => {
      await service?.idle();
      await lock.release();
    });
    if (service) {
      ctx.onStart(() => service.start());
      ctx.schedule("tick", { everyMs: tickMs(options.intervalMs) }, () => service.tick());
      ctx.metrics.gauge({
        name: "service_backup_target_bytes",
        help: "Bytes of the generations (and temporary files) in BACKUP_TARGET",
        async collect() {
          this.set((await service.targetState()).bytes);
        },
      });
    }
    registerBackupRoutes(ctx.router, service);
    ctx.healthComponent(backupComponent(options, service));
  },
});
