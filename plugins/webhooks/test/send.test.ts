import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createReceivers } from "../src/receivers.js";
import { DeliveryFailure, sendDelivery } from "../src/send.js";

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

/** A server that drops every kept-alive connection at its second request, as a receiver closing an idle one would. */
async function droppingServer(): Promise<{ url: string; answered: number[] }> {
  const answered: number[] = [];
  const served = new WeakMap<Socket, number>();
  server = createServer((req, res) => {
    const count = (served.get(req.socket) ?? 0) + 1;
    served.set(req.socket, count);
    req.resume();
    req.on("end", () => {
      if (count > 1) {
        req.socket.destroy();
        return;
      }
      answered.push(req.socket.remotePort ?? 0);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, answered };
}

describe("sendDelivery", () => {
  it("sends again on a fresh connection when a kept-alive one was closed under it", async () => {
    const { url, answered } = await droppingServer();
    const [receiver] = createReceivers([url]);
    const request = {
      receiver: receiver!,
      body: "{}",
      headers: { "content-type": "application/json" },
      timeoutMs: 2000,
    };
    expect(await sendDelivery(request)).toBe(204);
    expect(await sendDelivery(request)).toBe(204);
    expect(await sendDelivery(request)).toBe(204);
    expect(answered).toHaveLength(3);
    expect(new Set(answered).size).toBe(3);
    receiver!.agent.destroy();
  });

  it("names the receiver by host only when it cannot connect", async () => {
    const [receiver] = createReceivers(["http://127.0.0.1:9/secret-path?token=abc"]);
    const error = await sendDelivery({ receiver: receiver!, body: "{}", headers: {}, timeoutMs: 2000 }).catch((e) => e);
    expect(error).toBeInstanceOf(DeliveryFailure);
    expect((error as Error).message).toBe("ECONNREFUSED at 127.0.0.1:9");
    receiver!.agent.destroy();
  });
});
