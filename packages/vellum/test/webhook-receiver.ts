import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** One request a test receiver got. */
export interface Received {
  body: string;
  headers: IncomingHttpHeaders;
  /** The client port: deliveries over one kept-alive connection share it. */
  port: number;
}

/** How the receiver answers its `n`th request (0-based): a status and headers, or `hang` to never answer. */
export type Answer = { status: number; headers?: Record<string, string> } | "hang";

export interface TestReceiver {
  url: string;
  received: Received[];
  /** Changes how later requests are answered. */
  answer(fn: (n: number, body: string) => Answer): void;
  close(): Promise<void>;
}

/**
 * A real receiver on 127.0.0.1: records every request with its raw body and headers and answers
 * as told (204 by default). `close` also ends hanging requests and kept-alive connections.
 */
export async function startReceiver(path = "/hook"): Promise<TestReceiver> {
  const received: Received[] = [];
  const sockets = new Set<Socket>();
  const hanging = new Set<ServerResponse>();
  let respond: (n: number, body: string) => Answer = () => ({ status: 204 });
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const n = received.length;
      received.push({ body, headers: req.headers, port: req.socket.remotePort ?? 0 });
      const answer = respond(n, body);
      if (answer === "hang") {
        hanging.add(res);
        return;
      }
      res.writeHead(answer.status, answer.headers).end();
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    received,
    answer(fn) {
      respond = fn;
    },
    close() {
      for (const socket of sockets) socket.destroy();
      hanging.clear();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
