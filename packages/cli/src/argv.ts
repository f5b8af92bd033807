const SINGLE_DASH_LONG = /^-[A-Za-z][A-Za-z0-9-]*[A-Za-z0-9](=.*)?$/s;

/**
 * Accepts the seed's single-dash long flags (`-in`, `-dest`, `-verify`, `-port=3000`) by rewriting every
 * `-word` of two or more characters to `--word`. One-letter flags (`-h`) and everything after `--` stay as given.
 */
export function normalizeArgv(argv: readonly string[]): string[] {
  const end = argv.indexOf("--");
  const head = end === -1 ? argv : argv.slice(0, end);
  const tail = end === -1 ? [] : argv.slice(end);
  return [...head.map((arg) => (SINGLE_DASH_LONG.test(arg) ? `-${arg}` : arg)), ...tail];
}
