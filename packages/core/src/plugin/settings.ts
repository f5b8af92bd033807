/** Result of reading one setting from text (an environment variable or a flag). */
export type Parsed<T> = { ok: true; value: T } | { ok: false; problem: string };

/**
 * One setting of a plugin, declared once in its definition: the CLI reads its variable, checks
 * it, prints it in `vellum config` and documents it in `docs/config.md`; the kernel checks the
 * value again at setup, whatever its source (options, config file, environment).
 */
export interface SettingDeclaration<T = unknown> {
  /** Environment variable that sets it; none: it is set only in code or the config file. */
  env?: string;
  /** One line for `vellum config` and the generated reference. */
  description: string;
  default?: T;
  /** Shown as `(set)`, never printed, never repeated in a problem. */
  secret?: boolean;
  /** The default as the reference shows it (`10`, `generated`), when the raw value reads badly. */
  defaultText?: string;
  /** A value as `vellum config` prints it, in the variable's terms (`10` GB, not bytes). */
  show?(value: unknown): string;
  /** Reads the variable's text. */
  parse(text: string): Parsed<T>;
  /** Checks a value from any source; a problem in one line, or undefined when it is usable. */
  check(value: unknown): string | undefined;
}

/** A problem with one setting, named as the user set it (variable, flag or option path). */
export interface SettingProblem {
  /** The setting's key in the plugin's options. */
  setting: string;
  message: string;
}

export type SettingDeclarations<O extends object> = { [K in keyof O]?: SettingDeclaration<O[K]> };

const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
const fail = (problem: string): Parsed<never> => ({ ok: false, problem });

/** A parser that reads the text with `read`, then reports the check's problem, if any. */
function readThenCheck<T>(read: (text: string) => T, check: (value: unknown) => string | undefined) {
  return (text: string): Parsed<T> => {
    const value = read(text);
    const problem = check(value);
    return problem === undefined ? ok(value) : fail(problem);
  };
}

type Common<T> = Pick<SettingDeclaration<T>, "env" | "description" | "default" | "secret" | "defaultText" | "show">;

const TRUE = new Set(["true", "1", "yes", "on"]);
const FALSE = new Set(["false", "0", "no", "off"]);
const DECIMAL = /^\d+(\.\d+)?$/;
const INTEGER = /^\d+$/;

/** Comma list: entries trimmed, empty ones dropped. */
export function parseList(text: string): string[] {
  return text
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
}

/** Constructors for the usual kinds of setting; each brings its parser and its check. */
export const setting = {
  boolean(common: Common<boolean>): SettingDeclaration<boolean> {
    return {
      ...common,
      parse(text) {
        const lower = text.toLowerCase();
        if (TRUE.has(lower)) return ok(true);
        if (FALSE.has(lower)) return ok(false);
        return fail(`'${text}' is not a boolean (true or false)`);
      },
      check: (value) => (typeof value === "boolean" ? undefined : "expected true or false"),
    };
  },

  /** A whole number from `min` to `max`. */
  integer(common: Common<number> & { min?: number; max?: number }): SettingDeclaration<number> {
    const { min = 0, max = Number.MAX_SAFE_INTEGER, ...rest } = common;
    const check = (value: unknown) =>
      Number.isInteger(value) && (value as number) >= min && (value as number) <= max
        ? undefined
        : `expected a whole number from ${min} to ${max}`;
    return {
      ...rest,
      parse: (text) =>
        INTEGER.test(text) && check(Number(text)) === undefined
          ? ok(Number(text))
          : fail(`'${text}' is not a whole number from ${min} to ${max}`),
      check,
    };
  },

  /**
   * An amount written in `unit` (`10` GB) and kept in base units (`scale` per unit, e.g. bytes):
   * more than 0, at most `max` units.
   */
  amount(common: Common<number> & { unit: string; scale: number; max: number }): SettingDeclaration<number> {
    const { unit, scale, max, ...rest } = common;
    return {
      show: (value) => String(Number(value) / scale),
      ...rest,
      parse(text) {
        const value = Number(text);
        if (!DECIMAL.test(text)) return fail(`'${text}' is not a positive number of ${unit}`);
        if (value <= 0 || value > max) return fail(`${text} is out of range (more than 0, at most ${max} ${unit})`);
        return ok(Math.floor(value * scale));
      },
      check: (value) =>
        typeof value === "number" && Number.isFinite(value) && value > 0 && value <= max * scale
          ? undefined
          : `expected more than 0 and at most ${max} ${unit}`,
    };
  },

  /** Text; `minLength` for keys and secrets (the problem never repeats a secret). */
  string(common: Common<string> & { minLength?: number; pattern?: RegExp; hint?: string }): SettingDeclaration<string> {
    const { minLength = 1, pattern, hint, ...rest } = common;
    const check = (value: unknown) => {
      if (typeof value !== "string") return "expected a string";
      if (value.length < minLength)
        return minLength > 1 ? `shorter than ${minLength} characters` : "a value is required";
      if (pattern && !pattern.test(value)) return hint ?? `does not match ${pattern}`;
      return undefined;
    };
    return { ...rest, parse: readThenCheck((text) => text, check), check };
  },

  /** A comma list in the environment, an array of strings elsewhere; `item` checks each entry. */
  list(common: Common<string[]> & { item?: (entry: string) => string | undefined }): SettingDeclaration<string[]> {
    const { item = () => undefined, ...rest } = common;
    const check = (value: unknown) => {
      if (!Array.isArray(value) || value.some((entry) => typeof entry !== "string"))
        return "expected a list of strings";
      const bad = value.findIndex((entry: string) => item(entry) !== undefined);
      return bad < 0 ? undefined : `entry ${bad + 1} ${item(value[bad] as string)}`;
    };
    return { ...rest, parse: readThenCheck(parseList, check), check };
  },
};

/**
 * The problems of a plugin's effective options against its declarations, in declaration order.
 * Missing values are fine (the plugin's defaults apply); `undefined` is never checked.
 */
export function checkSettings<O extends object>(
  declarations: SettingDeclarations<O>,
  options: Readonly<Partial<O>>,
): SettingProblem[] {
  const problems: SettingProblem[] = [];
  for (const [key, declaration] of Object.entries(declarations) as Array<[string, SettingDeclaration | undefined]>) {
    const value = (options as Record<string, unknown>)[key];
    if (value === undefined || !declaration) continue;
    const message = declaration.check(value);
    if (message !== undefined) problems.push({ setting: key, message });
  }
  return problems;
}

/** The declared defaults, as options. */
export function settingDefaults<O extends object>(declarations: SettingDeclarations<O>): Partial<O> {
  const defaults: Record<string, unknown> = {};
  for (const [key, declaration] of Object.entries(declarations) as Array<[string, SettingDeclaration | undefined]>) {
    if (declaration?.default !== undefined) defaults[key] = declaration.default;
  }
  return defaults as Partial<O>;
}

/**
 * Reads the declared variables of one plugin from `env` (the CLI passes the process environment; the
 * kernel itself reads no environment). Returns the options they set and their problems.
 */
export function readSettingsFromEnv<O extends object>(
  declarations: SettingDeclarations<O>,
  env: Readonly<Record<string, string | undefined>>,
): { options: Partial<O>; problems: Array<SettingProblem & { variable: string }> } {
  const options: Record<string, unknown> = {};
  const problems: Array<SettingProblem & { variable: string }> = [];
  for (const [key, declaration] of Object.entries(declarations) as Array<[string, SettingDeclaration | undefined]>) {
    if (!declaration?.env) continue;
    const raw = env[declaration.env];
    const text = declaration.secret ? raw : raw?.trim();
    if (!text) continue;
    const parsed = declaration.parse(text);
    if (parsed.ok) options[key] = parsed.value;
    else problems.push({ setting: key, variable: declaration.env, message: parsed.problem });
  }
  return { options: options as Partial<O>, problems };
}
