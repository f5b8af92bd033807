import { stripVTControlCharacters } from "node:util";

/**
 * Whether the CLI writes ANSI colour to a stream. The one place that decides, for help, command output and logs:
 * 1. `FORCE_COLOR` set and not empty: colour, even into a pipe or a file (https://force-color.org), except `0` and
 *    `false`, which mean no colour even on a terminal (as Node.js and chalk's supports-color read them).
 * 2. else `NO_COLOR` set and not empty: no colour (https://no-color.org).
 * 3. else colour only when the stream is a terminal (TTY) whose `TERM` is not `dumb`.
 *
 * `FORCE_COLOR` wins over `NO_COLOR`: force-color.org's reference implementation applies it after `NO_COLOR`, and
 * Node.js does the same (it warns "The 'NO_COLOR' env is ignored due to the 'FORCE_COLOR' env being set"), so the
 * CLI agrees with the runtime it runs in.
 */
export function colorEnabled(env: NodeJS.ProcessEnv, stream: { readonly isTTY?: boolean }): boolean {
  const force = env.FORCE_COLOR?.trim().toLowerCase();
  if (force) return force !== "0" && force !== "false";
  if (env.NO_COLOR) return false;
  return stream.isTTY === true && env.TERM !== "dumb";
}

/** Where a stream's text goes: as given when colour is on for it, with every ANSI escape sequence removed otherwise. */
export function textFor(color: boolean): (text: string) => string {
  return color ? (text) => text : stripVTControlCharacters;
}

/**
 * `stream` with its `write` passing text through `textFor(color)`: handed to the logger, so that consola's own
 * colour choice (made once, from the process's environment, for stdout only) never overrides `colorEnabled`.
 */
export function colorFilteredStream(stream: NodeJS.WriteStream, color: boolean): NodeJS.WriteStream {
  if (color) return stream;
  const plain = textFor(false);
  const write = (chunk: unknown, ...rest: unknown[]) =>
    (stream.write as (...args: unknown[]) => boolean)(typeof chunk === "string" ? plain(chunk) : chunk, ...rest);
  return Object.create(stream, { write: { value: write } }) as NodeJS.WriteStream;
}

const sgr = (open: number, close: number) => (text: string) => `\u001b[${open}m${text}\u001b[${close}m`;

/**
 * The styles of the CLI's help. They always emit ANSI codes: whatever the CLI prints goes through `textFor`, which
 * drops them when colour is off, so no caller decides on its own.
 */
export const style = {
  heading: (text: string) => sgr(1, 22)(sgr(4, 24)(text)),
  command: sgr(36, 39),
  dim: sgr(90, 39),
} as const;
