import { isIP } from "node:net";

/** Longest client string kept as a key when it is not an IP address (bounds a key's size). */
const MAX_OPAQUE_KEY = 64;

/**
 * The 8 sixteen-bit groups of a valid IPv6 address (`isIP(address) === 6`): `::` expanded, an
 * embedded dotted IPv4 tail turned into its two groups, a zone (`%eth0`) dropped.
 */
function ipv6Groups(address: string): number[] {
  const zone = address.indexOf("%");
  const text = zone === -1 ? address : address.slice(0, zone);
  const parse = (part: string): number[] =>
    part === ""
      ? []
      : part.split(":").flatMap((piece) => {
          if (!piece.includes(".")) return [Number.parseInt(piece, 16)];
          const [a = 0, b = 0, c = 0, d = 0] = piece.split(".").map(Number);
          return [(a << 8) | b, (c << 8) | d];
        });
  const gap = text.indexOf("::");
  if (gap === -1) return parse(text);
  const head = parse(text.slice(0, gap));
  const tail = parse(text.slice(gap + 2));
  return [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
}

/**
 * The key that rate-limit and lockout counters use for a client address:
 *
 * - IPv4: the address itself (`203.0.113.7`).
 * - IPv4-mapped IPv6 (`::ffff:203.0.113.7`, also in hex form `::ffff:cb00:7107`): the IPv4 address,
 *   so a dual-stack socket and a plain IPv4 one count the same client once.
 * - Other IPv6: its /64 prefix in canonical form (`2001:db8:0:0::/64`). A client usually holds a
 *   whole /64 and can pick any address in it, so rotating addresses inside it must not multiply
 *   its budget: `2001:db8::1` and `2001:db8:0:0:ffff::2` share one key.
 * - Anything else (`unknown` when no address is known): the string, cut to 64 characters.
 */
export function rateKey(client: string): string {
  const family = isIP(client);
  if (family === 4) return client;
  if (family === 0) return client.length > MAX_OPAQUE_KEY ? client.slice(0, MAX_OPAQUE_KEY) : client;
  const g = ipv6Groups(client);
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0xffff) {
    return `${g6 >> 8}.${g6 & 0xff}.${g7 >> 8}.${g7 & 0xff}`;
  }
  return `${g0.toString(16)}:${g1.toString(16)}:${g2.toString(16)}:${g3.toString(16)}::/64`;
}
