import { beforeAll, describe, expect, it } from "vitest";
import {
  argon2idKek,
  HEADER_BYTES,
  KDF_LIMITS,
  kdfLimitViolation,
  openVpbk,
  parseHeader,
  verifyVpbk,
  VpbkError,
  vpbkExitCode,
} from "../src/index.js";
import { kek, outcome, PASSPHRASE, smallGeneration, unlock } from "./support.js";

let archive: Buffer;

beforeAll(async () => {
  ({ archive } = await smallGeneration());
});

/** What a flip of each header byte must produce (backup-format.md §5 tests 1–4). */
function expectedCodes(byte: number): string[] {
  if (byte < 8) return ["E_MAGIC"];
  if (byte < 10) return ["E_VERSION"];
  if (byte < 20) return ["E_HEADER"];
  if (byte < 32) return ["E_KDF_LIMITS", "E_UNLOCK"]; // m, t, p: out of bounds, or another KEK
  if (byte < 64) return ["E_UNLOCK"]; // kdf_salt (another KEK), stream_salt (the wrap's AAD)
  if (byte < 72) return ["E_UNLOCK", "E_HEADER"]; // created_ms: AAD, or beyond 2^53
  if (byte < 88) return ["E_UNLOCK"]; // generation_id
  if (byte < 96) return ["E_HEADER"]; // frame_size, reserved
  if (byte < 156) return ["E_UNLOCK"]; // wrap_nonce, wrapped_dk and its tag
  return ["E_HEADER_MAC"];
}

function withHeader(edit: (header: Buffer) => void): Buffer {
  const copy = Buffer.from(archive);
  edit(copy.subarray(0, HEADER_BYTES));
  return copy;
}

describe("the .vpbk header", () => {
  it("rejects every single-bit flip of all 188 header bytes, each with the code of its field", async () => {
    const noKdfBefore = new Set(["E_MAGIC", "E_VERSION", "E_HEADER", "E_KDF_LIMITS"]);
    for (let byte = 0; byte < HEADER_BYTES; byte += 1) {
      for (let bit = 0; bit < 8; bit += 1) {
        const derive = counting();
        const flipped = withHeader((h) => {
          h[byte] = (h[byte] as number) ^ (1 << bit);
        });
        const result = await outcome(flipped, { passphrase: PASSPHRASE, deriveKek: derive });
        expect(result.ok, `byte ${byte} bit ${bit}`).toBe(false);
        if (result.ok) continue;
        expect(expectedCodes(byte), `byte ${byte} bit ${bit}: ${result.code}`).toContain(result.code);
        if (noKdfBefore.has(result.code)) expect(derive.calls, `byte ${byte}: no KDF before ${result.code}`).toBe(0);
        expect(result.error.exitCode).toBe(result.code === "E_UNLOCK" ? 3 : 1);
      }
    }
  });

  it("rejects every length shorter than the header as E_SHORT, the empty file included", async () => {
    for (let length = 0; length < HEADER_BYTES; length += 1) {
      expect(await outcome(archive.subarray(0, length))).toMatchObject({ ok: false, code: "E_SHORT" });
    }
    expect(() => parseHeader(Buffer.alloc(0))).toThrow(VpbkError);
  });

  it("refuses KDF parameters beyond the caps before any Argon2 work, in well under 100 ms", async () => {
    const cases: [string, number, number, number][] = [
      ["m = 4 GiB", 4 * 1024 * 1024, 3, 4],
      ["m below 19 MiB", 19_455, 3, 4],
      ["m = 0", 0, 1, 1],
      ["t = 10^6", 65_536, 1_000_000, 4],
      ["t = 0", 65_536, 0, 4],
      ["t = 9", 65_536, 9, 4],
      ["p = 255", 65_536, 3, 255],
      ["p = 0", 65_536, 3, 0],
      ["p = 17", 65_536, 3, 17],
      ["m·t over the cap", 1_048_576, 3, 4],
      ["m < 8p", 100, 1, 16],
      ["all at 2^32 - 1", 0xffff_ffff, 0xffff_ffff, 0xffff_ffff],
    ];
    for (const [name, m, t, p] of cases) {
      const derive = counting();
      const hostile = withHeader((h) => {
        h.writeUInt32BE(m, 20);
        h.writeUInt32BE(t, 24);
        h.writeUInt32BE(p, 28);
      });
      const started = performance.now();
      const result = await outcome(hostile, { passphrase: PASSPHRASE, deriveKek: derive });
      const elapsed = performance.now() - started;
      expect(result, name).toMatchObject({ ok: false, code: "E_KDF_LIMITS" });
      expect(derive.calls, name).toBe(0);
      expect(elapsed, name).toBeLessThan(100);
      expect(vpbkExitCode("E_KDF_LIMITS")).toBe(1);
    }
    // The real Argon2id refuses them too, whoever calls it.
    await expect(
      argon2idKek(Buffer.from("x"), Buffer.alloc(16), { memoryKiB: 4 << 20, timeCost: 1, parallelism: 1 }),
    ).rejects.toMatchObject({ code: "E_KDF_LIMITS" });
  });

  it("accepts the bounds themselves", () => {
    const L = KDF_LIMITS;
    expect(kdfLimitViolation({ memoryKiB: L.minMemoryKiB, timeCost: 1, parallelism: 1 })).toBeUndefined();
    expect(kdfLimitViolation({ memoryKiB: L.maxMemoryKiB, timeCost: 2, parallelism: 16 })).toBeUndefined();
    expect(kdfLimitViolation({ memoryKiB: 262_144, timeCost: 8, parallelism: 4 })).toBeUndefined();
    expect(kdfLimitViolation({ memoryKiB: 262_145, timeCost: 8, parallelism: 4 })).toMatch(/m·t/);
  });

  it("answers E_UNLOCK (exit 3) to a wrong passphrase: another case, a trailing newline, NFC against NFD", async () => {
    for (const wrong of [PASSPHRASE.toUpperCase(), `${PASSPHRASE}\n`, `${PASSPHRASE} `, "", "x"]) {
      const result = await outcome(archive, unlock(wrong));
      expect(result, JSON.stringify(wrong)).toMatchObject({ ok: false, code: wrong === "" ? "E_USAGE" : "E_UNLOCK" });
    }
    const nfc = "Crème brûlée, Ångström; 16+ chars";
    const nfd = nfc.normalize("NFD");
    expect(nfd).not.toBe(nfc);
    for (const [written, tried] of [
      [nfc, nfd],
      [nfd, nfc],
    ] as const) {
      const made = await smallGeneration(written);
      expect(await outcome(made.archive, unlock(written))).toMatchObject({ ok: true });
      const result = await outcome(made.archive, unlock(tried));
      expect(result).toMatchObject({ ok: false, code: "E_UNLOCK" });
      if (!result.ok) expect(result.error.exitCode).toBe(3);
    }
  });

  it("tries the previous passphrase only after the current one fails, and fails when neither opens it", async () => {
    const both = await openVpbk(archive, { passphrase: PASSPHRASE, previousPassphrase: "old", deriveKek: kek });
    expect(both.unlockedWith).toBe("passphrase");
    await both.close();
    await expect(
      verifyVpbk(archive, { passphrase: "new one", previousPassphrase: "old one", deriveKek: kek }),
    ).rejects.toMatchObject({ code: "E_UNLOCK" });
  });

  it("rejects a format version 2 file as E_VERSION and reads the cleartext header without a passphrase", () => {
    const v2 = withHeader((h) => h.writeUInt16BE(2, 8));
    expect(() => parseHeader(v2)).toThrow(expect.objectContaining({ code: "E_VERSION" }));
    expect(parseHeader(archive)).toMatchObject({ version: 1, kdf: { memoryKiB: 19_456, timeCost: 1, parallelism: 1 } });
  });
});

/** The shared memoised KDF, counting only this caller's calls. */
function counting(): typeof kek {
  const derive = Object.assign(
    async (...args: Parameters<typeof kek>) => {
      derive.calls += 1;
      return kek(...args);
    },
    { calls: 0, derivations: 0 },
  );
  return derive;
}
