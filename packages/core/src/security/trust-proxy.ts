import { isIP } from "node:net";
import proxyaddr from "proxy-addr";
import { CoreErrors } from "../errors/vellum-error.js";

/**
 * `security.trustProxy` as a config file or an embedding application writes it:
 *
 * - `false` or `0` (default): nobody is trusted; the client IP is the socket address.
 * - a hop count `n` ≥ 1: the socket peer and the `n - 1` proxies in front of it are trusted
 *   whatever their addresses (Express's `trust proxy` number): the client is the `n`-th address
 *   from the right of `X-Forwarded-For`. Only safe when the port is reachable through the proxies alone.
 * - names and CIDRs (a comma list or an array): `loopback`, `linklocal`, `uniquelocal`,
 *   `10.0.0.0/8`, `2001:db8::/32`, `192.0.2.7`: only peers in those ranges are trusted, and
 *   `X-Forwarded-For` is walked from the right while each hop is trusted (proxy-addr's rule).
 * - `true`: the same as `loopback` (one proxy on the same host). It does not trust every peer,
 *   as Express's `true` does: a client reaching the port directly could then choose its address.
 */
export type TrustProxySetting = boolean | number | string | readonly string[];

/** The setting in its plain form, as `/health/security` reports it. */
export type TrustProxyDescription = false | number | string[];

/** A setting checked and compiled once. */
export interface TrustProxy {
  readonly description: TrustProxyDescription;
  /** Whether the address at `hop` (0 = the socket peer, 1 = the rightmost forwarded entry, …) is a trusted proxy. */
  trusts(address: string, hop: number): boolean;
}

const NAMES = new Set(["loopback", "linklocal", "uniquelocal"]);
const PREFIX = /^\d{1,3}$/;

/** Why one entry of a trust list (a name, an address or a CIDR) is unusable, or undefined when it is fine. */
export function trustEntryProblem(entry: string): string | undefined {
  if (NAMES.has(entry)) return undefined;
  const slash = entry.lastIndexOf("/");
  const address = slash === -1 ? entry : entry.slice(0, slash);
  const family = address.includes("%") ? 0 : isIP(address);
  if (family === 0) return `'${entry}' is not a proxy name, IP address or CIDR`;
  if (slash === -1) return undefined;
  const prefix = entry.slice(slash + 1);
  const max = family === 4 ? 32 : 128;
  if (!PREFIX.test(prefix) || Number(prefix) < 1 || Number(prefix) > max) {
    return `'${entry}' has no prefix length between 1 and ${max}`;
  }
  return undefined;
}

function invalid(reason: string): Error {
  return CoreErrors.configInvalid(["security.trustProxy", reason]);
}

function entriesOf(setting: string | readonly string[]): string[] {
  const list = typeof setting === "string" ? setting.split(",") : [...setting];
  return list
    .map((entry) => (typeof entry === "string" ? entry.trim().toLowerCase() : entry))
    .filter((entry) => entry !== "");
}

/** The plain form of a setting, or throws `VELLUM_CONFIG_INVALID` naming `security.trustProxy`. */
export function describeTrustProxy(setting: TrustProxySetting | undefined): TrustProxyDescription {
  if (setting === undefined || setting === false) return false;
  if (setting === true) return ["loopback"];
  if (typeof setting === "number") {
    if (!Number.isSafeInteger(setting) || setting < 0) throw invalid(`${setting} is not a number of proxy hops`);
    return setting === 0 ? false : setting;
  }
  if (typeof setting !== "string" && !Array.isArray(setting)) {
    throw invalid("expected false, true, a number of proxy hops, or names and CIDRs of trusted proxies");
  }
  const entries = entriesOf(setting);
  for (const entry of entries) {
    if (typeof entry !== "string") throw invalid("a list of trusted proxies holds only strings");
    const problem = trustEntryProblem(entry);
    if (problem) throw invalid(problem);
  }
  return entries.length === 0 ? false : entries;
}

const NOBODY: TrustProxy = { description: false, trusts: () => false };

/** Checks a setting and compiles it (proxy-addr's `compile`); throws `VELLUM_CONFIG_INVALID` on a bad one. */
export function compileTrustProxy(setting: TrustProxySetting | undefined): TrustProxy {
  const description = describeTrustProxy(setting);
  if (description === false) return NOBODY;
  if (typeof description === "number") return { description, trusts: (_address, hop) => hop < description };
  let trusts: (address: string, hop: number) => boolean;
  try {
    trusts = proxyaddr.compile(description);
  } catch (error) {
    throw invalid(error instanceof Error ? error.message : String(error));
  }
  return { description, trusts };
}

export function isCompiledTrustProxy(value: unknown): value is TrustProxy {
  return typeof value === "object" && value !== null && !Array.isArray(value) && "trusts" in value;
}
