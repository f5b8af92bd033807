/**
 * Generation names (backup-format.md §4): `vk-YYYYMMDD-HHMMSS.vpbk`, UTC, from T0; the file is
 * written as `.vk-….vpbk.partial-<rand>` first.
 */

const NAME = /^vk-(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})\.vpbk$/;
const PARTIAL = /^\.vk-\d{8}-\d{6}\.vpbk\.partial-[0-9a-f]+$/;

/** `vk-YYYYMMDD-HHMMSS.vpbk` for a T0 in Unix ms (UTC). */
export function generationName(createdMs: number): string {
  const iso = new Date(createdMs).toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  return `vk-${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}-${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}.vpbk`;
}

/** The UTC second (Unix seconds) a generation name labels, or undefined for any other name. */
export function nameSecond(name: string): number | undefined {
  const match = NAME.exec(name);
  if (match === null) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const ms = Date.UTC(year, month - 1, day, hour, minute, second);
  // Reject what Date.UTC would roll over (month 13, second 61…): such a name is foreign.
  return generationName(ms) === name ? ms / 1000 : undefined;
}

/** Whether `name` is one of our temporary `.vk-….vpbk.partial-<rand>` files. */
export function isPartialName(name: string): boolean {
  return PARTIAL.test(name);
}
