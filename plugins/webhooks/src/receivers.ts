import { Agent as HttpAgent } from "node:http";
import { Agent as HttpsAgent } from "node:https";

/** One configured receiver: its URL (the key of its deliveries) and the name it is shown by. */
export interface Receiver {
  url: string;
  /**
   * Host (and port) only, so paths and query strings, which may carry tokens, stay out of logs,
   * `/health` and the deliveries list; `host#2` for a second receiver on the same host.
   */
  name: string;
  /** Its own keep-alive connection: deliveries to a receiver go one at a time, in order. */
  agent: HttpAgent;
}

/** The receivers of `urls` (already checked), in order. */
export function createReceivers(urls: readonly string[]): Receiver[] {
  const seen = new Map<string, number>();
  return urls.map((raw) => {
    const url = new URL(raw);
    const count = (seen.get(url.host) ?? 0) + 1;
    seen.set(url.host, count);
    const options = { keepAlive: true, maxSockets: 1 };
    return {
      url: url.href,
      name: count === 1 ? url.host : `${url.host}#${count}`,
      agent: url.protocol === "https:" ? new HttpsAgent(options) : new HttpAgent(options),
    };
  });
}

/** The receiver `reference` names: its URL or its name. */
export function findReceiver(receivers: readonly Receiver[], reference: string): Receiver | undefined {
  let href: string | undefined;
  try {
    href = new URL(reference).href;
  } catch {
    href = undefined;
  }
  return receivers.find((receiver) => receiver.url === href || receiver.name === reference);
}
