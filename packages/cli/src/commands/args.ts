import type { AddressFlags } from "../env.js";

export const dataDirArg = {
  "data-dir": {
    type: "string",
    valueHint: "dir",
    description: "Data directory (default: SERVICE_DATA_DIR, else ./data)",
  },
} as const;

export const addressArgs = {
  port: { type: "string", valueHint: "port", description: "Port to listen on (default: PORT, else 3000)" },
  host: { type: "string", valueHint: "host", description: "Address to listen on (default: HOST, else 127.0.0.1)" },
  ...dataDirArg,
} as const;

export function addressFlags(args: { port?: string; host?: string; "data-dir"?: string }): AddressFlags {
  return { port: args.port, host: args.host, dataDir: args["data-dir"] };
}
