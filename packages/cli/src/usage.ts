import type { ArgDef, ArgsDef, CommandDef, Resolvable } from "citty";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- commands of any argument shape
export type AnyCommand = CommandDef<any>;

export interface ArgvWalk {
  /** The root command followed by the subcommands named in argv. */
  chain: AnyCommand[];
  help: boolean;
  version: boolean;
  /** The first usage problem (unknown command or option), if any. */
  problem?: string;
}

export async function resolveValue<T>(value: Resolvable<T>): Promise<T> {
  return typeof value === "function" ? (value as () => T | Promise<T>)() : value;
}

const kebab = (name: string) => name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
const camel = (name: string) => name.replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());

function findOption(args: ArgsDef, flag: string): ArgDef | undefined {
  for (const [name, def] of Object.entries(args)) {
    if (def.type === "positional") continue;
    const aliases = "alias" in def && def.alias !== undefined ? [def.alias].flat() : [];
    const names = [name, kebab(name), camel(name), ...aliases];
    if (def.type === "boolean") names.push(...names.map((entry) => `no-${entry}`));
    if (names.includes(flag)) return def;
  }
  return undefined;
}

function positionalCount(args: ArgsDef): number {
  return Object.values(args).filter((def) => def.type === "positional").length;
}

/**
 * Walks argv the way citty dispatches it, to find the command it names, whether help or the version was asked
 * for, and the first unknown command or option (citty itself ignores unknown options). Options must follow the
 * command they belong to, since citty parses the whole argv at every level.
 */
export async function walkArgv(root: AnyCommand, argv: readonly string[]): Promise<ArgvWalk> {
  const walk: ArgvWalk = { chain: [root], help: false, version: false };
  let command = root;
  let args = await resolveValue(root.args ?? {});
  let positionals = positionalCount(args);
  let optionsSeen = false;
  for (let index = 0; index < argv.length; index++) {
    const token = argv[index] ?? "";
    if (token === "--") break;
    if (token.startsWith("-") && token.length > 1) {
      const flag = token.replace(/^-+/, "").split("=", 1)[0] ?? "";
      if (flag === "help" || flag === "h") walk.help = true;
      else if ((flag === "version" || flag === "v") && walk.chain.length === 1) walk.version = true;
      else {
        const option = findOption(args, flag);
        if (!option) return { ...walk, problem: `unknown option '${token.split("=", 1)[0]}'` };
        optionsSeen = true;
        if ((option.type === "string" || option.type === "enum") && !token.includes("=")) index++;
      }
      continue;
    }
    const subCommands = await resolveValue(command.subCommands ?? {});
    if (Object.hasOwn(subCommands, token)) {
      if (optionsSeen) return { ...walk, problem: `options before '${token}' are not accepted; put them after it` };
      command = await resolveValue(subCommands[token] as Resolvable<AnyCommand>);
      walk.chain.push(command);
      args = await resolveValue(command.args ?? {});
      positionals = positionalCount(args);
    } else if (positionals > 0) {
      positionals--;
    } else {
      return {
        ...walk,
        problem: walk.chain.length === 1 ? `unknown command '${token}'` : `unexpected argument '${token}'`,
      };
    }
  }
  return walk;
}
