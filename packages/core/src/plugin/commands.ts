import { CoreErrors, VellumError } from "../errors/vellum-error.js";
import type { AnyVellumPlugin } from "./define.js";
import type { OfflineCommandHandler } from "./offline.js";

/** What a plugin command gets from the CLI. */
export interface CommandIO {
  /** `--name value`, `--name=value` and `--flag` options after the command words. */
  readonly options: Readonly<Record<string, string | boolean>>;
  /** Arguments after the command words that are not options. */
  readonly positionals: readonly string[];
  /** True on a terminal: show live progress; otherwise print one summary line at the end. */
  readonly interactive: boolean;
  print(line: string): void;
  /**
   * Live progress on a terminal (ignored otherwise): `done` of `total` (when known), counted in
   * items or, with `unit: "bytes"`, in bytes (shown with the rate and the time left).
   */
  progress(done: number, total?: number, label?: string, unit?: "items" | "bytes"): void;
}

/** Resolves to the exit code (0 when nothing is returned). */
export type CommandHandler = (io: CommandIO) => Promise<number | undefined> | Promise<void>;

/** One option of a plugin command, for `vellum <command> --help`; the handler reads it from `io.options`. */
export interface CommandOptionDeclaration {
  description: string;
  /** What the option takes, shown as `--name <value>`; without it the option is a flag (`--name`). */
  value?: string;
}

/** A command in a plugin definition's `commands`: `{ reindex: { description, options } }`. */
export interface CommandDeclaration<O extends object = Record<string, unknown>> {
  description: string;
  /** Its options by name (without the dashes): `{ id: { description: "…", value: "delivery" } }`. */
  options?: Record<string, CommandOptionDeclaration>;
  /**
   * An offline command's handler: it runs without starting Vellum (no setup, no migrations, the
   * database not opened), with the plugin's options and the data dir's paths; for work on the data
   * dir as files, such as a restore. Commands without `run` bind their handler in setup.
   */
  run?: OfflineCommandHandler<O>;
}

/** A command as declared in a plugin definition, with the plugin that declares it. */
export interface DeclaredCommand {
  /** The words typed after `vellum`, e.g. `reindex` or `webhooks replay`. */
  name: string;
  description: string;
  /** Its declared options (empty when it declares none). */
  options: Readonly<Record<string, CommandOptionDeclaration>>;
  plugin: string;
  /** Declared with `run`: it runs without starting Vellum. */
  offline: boolean;
}

const normalize = (name: string) => name.trim().split(/\s+/).join(" ");

/**
 * Commands the plugins declare, known without starting anything (so `vellum <typo>` touches no
 * data). A duplicate name across plugins is refused.
 */
export function declaredCommands(plugins: readonly AnyVellumPlugin[]): DeclaredCommand[] {
  const byName = new Map<string, DeclaredCommand>();
  for (const plugin of plugins) {
    for (const [raw, declaration] of Object.entries(plugin.definition.commands ?? {})) {
      const { description, options = {} } = declaration;
      const name = normalize(raw);
      const existing = byName.get(name);
      if (existing) throw CoreErrors.commandDuplicate([name, existing.plugin, plugin.name], { plugin: plugin.name });
      byName.set(name, { name, description, options, plugin: plugin.name, offline: declaration.run !== undefined });
    }
  }
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/** The declared command named by the longest prefix of `words`, and how many words it took. */
export function matchCommand(
  commands: readonly DeclaredCommand[],
  words: readonly string[],
): { command: DeclaredCommand; consumed: number } | undefined {
  for (let n = words.length; n > 0; n--) {
    const name = words.slice(0, n).join(" ");
    const command = commands.find((c) => c.name === name);
    if (command) return { command, consumed: n };
  }
  return undefined;
}

/** The plugin and handler of `name` when it is an offline command (declared with `run`). */
export function offlineCommand(
  plugins: readonly (AnyVellumPlugin | undefined | null | false)[],
  name: string,
): { plugin: AnyVellumPlugin; run: OfflineCommandHandler } | undefined {
  for (const plugin of plugins) {
    if (!plugin) continue;
    for (const [declared, { run }] of Object.entries(plugin.definition.commands ?? {})) {
      if (run && normalize(declared) === name) return { plugin, run: run as OfflineCommandHandler };
    }
  }
  return undefined;
}

/** Handlers bound by plugins during setup (`ctx.command(name, run)`). */
export class CommandHandlers {
  readonly #handlers = new Map<string, CommandHandler>();

  bind(plugin: AnyVellumPlugin, name: string, handler: CommandHandler): void {
    const key = normalize(name);
    const declaration = Object.entries(plugin.definition.commands ?? {}).find(([n]) => normalize(n) === key)?.[1];
    if (!declaration || declaration.run) {
      const why = declaration ? "declares it with 'run' (offline)" : "does not declare it in 'commands'";
      const message = `plugin '${plugin.name}' binds command '${key}', but its definition ${why}`;
      throw new VellumError("VELLUM_COMMAND_UNDECLARED", message, { plugin: plugin.name });
    }
    this.#handlers.set(key, handler);
  }

  get(name: string): CommandHandler {
    const handler = this.#handlers.get(name);
    if (!handler) {
      throw new VellumError("VELLUM_COMMAND_UNBOUND", `command '${name}' is declared but its plugin bound no handler`);
    }
    return handler;
  }
}
