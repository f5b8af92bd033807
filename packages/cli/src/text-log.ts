import { format, inspect } from "node:util";
import type { ConsolaReporter, LogObject } from "consola";

const COLORS: Record<string, string> = {
  fatal: "31",
  error: "31",
  warn: "33",
  info: "36",
  ready: "32",
  success: "32",
  start: "36",
  debug: "90",
  trace: "90",
};

/**
 * Text logs for operators: one line an entry, `<ISO time> <LEVEL> [tag] message`, an error's stack
 * indented below it. The level is coloured; the CLI's streams drop the colour where it is off
 * (a pipe, NO_COLOR). Warnings and errors go to stderr, the rest to stdout.
 */
export function textReporter(streams: {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}): ConsolaReporter {
  return {
    log(logObj: LogObject) {
      const args = [...logObj.args];
      const error = args.find((arg): arg is Error => arg instanceof Error);
      const text = args.filter((arg) => arg !== error);
      const level = logObj.type.toUpperCase().padEnd(5);
      const color = COLORS[logObj.type] ?? "0";
      const tag = logObj.tag ? ` [${logObj.tag}]` : "";
      const message = text.length > 0 ? format(...text) : (error?.message ?? "");
      const stack = error ? `\n${indent(error.stack ?? inspect(error))}` : "";
      const stream = logObj.level <= 1 ? streams.stderr : streams.stdout;
      stream.write(`${logObj.date.toISOString()} \u001b[${color}m${level}\u001b[0m${tag} ${message}${stack}\n`);
    },
  };
}

const indent = (text: string) =>
  text
    .split("\n")
    .map((line) => `    ${line}`)
    .join("\n");
