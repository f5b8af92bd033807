/** One configuration problem: the variable (or flag, or file) it concerns and what is wrong, never a secret's value. */
export interface ConfigProblem {
  variable: string;
  message: string;
}

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

export function formatProblem(problem: ConfigProblem): string {
  return `vellum: ${problem.variable}: ${problem.message}`;
}

/** An expected failure: its lines go to stderr as they are (no stack trace) and the CLI exits with `exitCode`. */
export class CliError extends Error {
  override readonly name = "CliError";
  readonly exitCode: number;
  readonly lines: string[];

  constructor(exitCode: number, lines: string[]) {
    super(lines.join("\n"));
    this.exitCode = exitCode;
    this.lines = lines;
  }

  static configuration(problems: ConfigProblem[]): CliError {
    return new CliError(EXIT_USAGE, problems.map(formatProblem));
  }

  static usage(message: string): CliError {
    return new CliError(EXIT_USAGE, [`vellum: ${message}`, "vellum: run 'vellum --help' for usage"]);
  }
}

interface CodedError extends Error {
  code: string;
}

/** Kernel errors (`VellumError`) are recognised by shape so the CLI does not depend on the class identity. */
export function isVellumError(error: unknown): error is CodedError {
  return error instanceof Error && error.name === "VellumError" && typeof (error as CodedError).code === "string";
}

const CONFIGURATION_CODES = new Set([
  "VELLUM_PLUGIN_DUPLICATE",
  "VELLUM_PLUGIN_DEPENDENCY_MISSING",
  "VELLUM_PLUGIN_DEPENDENCY_CYCLE",
  "VELLUM_SERVICE_UNDECLARED",
  "VELLUM_SERVICE_DUPLICATE",
  "VELLUM_ROUTE_DUPLICATE",
  "VELLUM_COMMAND_DUPLICATE",
  "VELLUM_COMMAND_UNDECLARED",
  "VELLUM_MIGRATIONS_PENDING",
]);

/** SQLite's codes for a database file that is damaged, or is not a database at all. */
const DAMAGED_DATABASE = /^SQLITE_(CORRUPT|NOTADB)/;

function firstLine(text: string): string {
  return text.split("\n", 1)[0] ?? "";
}

/** Turns anything thrown by a command into stderr lines and an exit code; only unexpected errors keep their stack. */
export function describeError(error: unknown): { exitCode: number; lines: string[] } {
  if (error instanceof CliError) return { exitCode: error.exitCode, lines: error.lines };
  if (error instanceof Error && error.name === "CLIError") {
    return CliError.usage(firstLine(error.message));
  }
  if (isVellumError(error)) {
    const configuration = CONFIGURATION_CODES.has(error.code) || error.code.startsWith("VELLUM_CONFIG_");
    return {
      exitCode: configuration ? EXIT_USAGE : EXIT_FAILURE,
      lines: [`vellum: ${error.code}: ${firstLine(error.message)}`],
    };
  }
  if (error instanceof Error && typeof (error as Partial<CodedError>).code === "string") {
    const { code } = error as CodedError;
    const hint = DAMAGED_DATABASE.test(code)
      ? ` (${code}): the database file is damaged; restore it from a backup (docs/operations.md, "Backups and restores")`
      : "";
    return { exitCode: EXIT_FAILURE, lines: [`vellum: ${firstLine(error.message)}${hint}`] };
  }
  const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
  return { exitCode: EXIT_FAILURE, lines: [`vellum: unexpected error: ${detail}`] };
}
