import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { verifyWebhook } from "@vellum/plugin-webhooks/verify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// The webhooks outbox under crashes (contract §7, at least once). A real server child (built dist:
// articles + webhooks, fixtures/webhooks-crash-child.mjs) on one data directory is SIGKILLed at 20
// different moments, each right after writes committed and before their deliveries went through: receiver
// `a` holds them, refuses them (503) or answers too late; receiver `b` varies. Every fourth round leaves
// writes in flight and kills the child as soon as one of their deliveries goes out. Writes that roll back
// are mixed in: a rename onto a taken slug (409), a delete of nothing (404), and changes a required
// `article:commit` subscriber placed after webhooks fails, so the outbox rows it wrote roll back with them
// (an update's 500; a queued create that is retried until dead-lettered).
//
// After the last restart, with both receivers answering, the outbox drains and:
// - every acknowledged change has exactly one event id, delivered (2xx) to each receiver at least once;
//   duplicates carry the same id and body, every delivery is signed (`verifyWebhook`);
// - no rolled-back change has an event, and no event exists that no write explains;
// - a write cut off by the kill committed exactly when its event was delivered, and replaying the events
//   in id order gives exactly the articles in the database;
// - per article and per receiver, events come in commit order;
// - each kill did leave committed events undelivered, and some were sent again after a restart.

const CHILD = fileURLToPath(new URL("./fixtures/webhooks-crash-child.mjs", import.meta.url));
const TSCONFIG = fileURLToPath(new URL("../tsconfig.json", import.meta.url));
const API_KEY = "webhooks-crash-api-key-0123456789abcdef";
const SECRET = "webhooks-crash-secret-0123456789";
const ARTICLES = "/api/v1/articles";
const ROUNDS = 20;
/** How long a `slow` receiver takes to answer: longer than any kill delay, so the kill comes first. */
const SLOW_MS = 60;

type Mode = "ok" | "down" | "hold" | "slow";
type ReceiverName = "a" | "b";
const RECEIVERS: readonly ReceiverName[] = ["a", "b"];
/** Receiver a never answers in time during a round: every kill leaves committed events in the outbox. */
const A_MODES: readonly Mode[] = ["hold", "down", "slow"];
const B_MODES: readonly Mode[] = ["ok", "slow", "ok", "hold", "down"];
/** Milliseconds between the last acknowledgement and the SIGKILL. */
const KILL_DELAYS = [0, 1, 2, 5, 10, 20, 30];

// ---------------------------------------------------------------------------------------------------
// Receivers

interface EventArticle {
  id: string;
  slug: string;
  title?: string;
  content?: string;
  tags?: string[];
  created_at?: string;
  updated_at?: string;
}

interface WebhookEvent {
  id: string;
  type: "article.created" | "article.updated" | "article.deleted";
  created_at: string;
  data: { article: EventArticle };
}

interface Arrival {
  receiver: ReceiverName;
  /** Kills so far when it arrived: it was sent by the child of round `epoch` (or the last child). */
  epoch: number;
  /** `X-Service-Delivery` and `X-Service-Event`. */
  delivery: string | undefined;
  eventType: string | undefined;
  raw: string;
  verified: boolean;
  /** Set when it was answered 2xx while the child that sent it was alive: the order of those answers. */
  deliveredSeq?: number;
}

/** Two webhook receivers (`/a`, `/b`) on one real HTTP server, each answering as its mode says. */
class Receivers {
  readonly arrivals: Arrival[] = [];
  modes: Record<ReceiverName, Mode> = { a: "ok", b: "ok" };
  epoch = 0;
  /** Called with each signed event as it arrives, before it is answered. */
  onArrival: ((event: WebhookEvent) => void) | undefined;
  readonly #server = createServer((req, res) => this.#handle(req, res));
  readonly #held = new Set<ServerResponse>();
  #seq = 0;

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  /** Drops the answers still held (the child waiting for them is dead). */
  dropHeld(): void {
    for (const res of this.#held) res.destroy();
    this.#held.clear();
  }

  async close(): Promise<void> {
    this.dropHeld();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const receiver = req.url === "/a" ? "a" : req.url === "/b" ? "b" : undefined;
      if (!receiver) {
        res.statusCode = 404;
        res.end();
        return;
      }
      const body = Buffer.concat(chunks);
      const arrival: Arrival = {
        receiver,
        epoch: this.epoch,
        delivery: header(req, "x-service-delivery"),
        eventType: header(req, "x-service-event"),
        raw: body.toString("utf8"),
        verified: verifyWebhook(body, req.headers, SECRET).ok,
      };
      this.arrivals.push(arrival);
      if (arrival.verified) this.onArrival?.(JSON.parse(arrival.raw) as WebhookEvent);
      const answer = () => {
        // A child killed since it sent this never gets the answer: not delivered.
        if (this.epoch !== arrival.epoch || res.destroyed) return;
        arrival.deliveredSeq = ++this.#seq;
        res.end("ok");
      };
      switch (this.modes[receiver]) {
        case "ok":
          answer();
          break;
        case "down":
          res.statusCode = 503;
          res.end();
          break;
        case "slow":
          setTimeout(answer, SLOW_MS);
          break;
        case "hold":
          this.#held.add(res);
          res.on("close", () => this.#held.delete(res));
          break;
      }
    });
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === "string" ? value : undefined;
}

// ---------------------------------------------------------------------------------------------------
// The child server

interface Served {
  child: ChildProcess;
  url: string;
  exited: Promise<NodeJS.Signals | null>;
}

/** Starts the child on `dataDir` and resolves with its URL once it listens. */
function serve(dataDir: string, receiverBase: string): Promise<Served> {
  return new Promise((resolve, reject) => {
    const urls = RECEIVERS.map((name) => `${receiverBase}/${name}`).join(",");
    const child = spawn(process.execPath, [CHILD, dataDir, API_KEY, urls, SECRET], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = new Promise<NodeJS.Signals | null>((done) => child.once("exit", (_code, signal) => done(signal)));
    let stderr = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`child did not listen within 15 s: ${stderr}`));
    }, 15_000);
    child.stdout?.on("data", (chunk: Buffer) => {
      const match = /listening (\S+)/.exec(chunk.toString());
      if (match?.[1]) {
        clearTimeout(timer);
        resolve({ child, url: match[1], exited });
      }
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`child exited (${code ?? signal}) before listening: ${stderr}`));
    });
  });
}

async function writeHeaders(url: string): Promise<Record<string, string>> {
  const res = await fetch(`${url}/docs/api/errors`, { signal: AbortSignal.timeout(10_000) });
  const token = res.headers
    .getSetCookie()
    .find((c) => c.startsWith("svc_csrf="))
    ?.split(";")[0]
    ?.slice("svc_csrf=".length);
  if (!token) throw new Error("no svc_csrf cookie");
  return {
    authorization: `Bearer ${API_KEY}`,
    cookie: `svc_csrf=${token}`,
    "x-csrf-token": token,
    "content-type": "application/json",
  };
}

async function getJson<T>(url: string): Promise<T> {
  const res = await fetch(url, {
    headers: { authorization: `Bearer ${API_KEY}` },
    signal: AbortSignal.timeout(10_000),
  });
  if (!res.ok) throw new Error(`GET ${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface ListedArticle {
  id: string;
  slug: string;
  title: string;
  tags: string[];
  created_at: string;
  updated_at: string;
}

async function listArticles(url: string): Promise<Map<string, ListedArticle>> {
  const all = new Map<string, ListedArticle>();
  let cursor: string | null = null;
  do {
    const query: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : "";
    const page: { articles: ListedArticle[]; next_cursor: string | null } = await getJson(
      `${url}${ARTICLES}?limit=100${query}`,
    );
    for (const article of page.articles) all.set(article.id, article);
    cursor = page.next_cursor;
  } while (cursor);
  return all;
}

// ---------------------------------------------------------------------------------------------------
// Writes

type Op =
  | "create"
  | "update"
  | "rename"
  | "delete"
  /** Rolls back: the required subscriber after webhooks throws (500). */
  | "rollback-update"
  /** Accepted (202), then every attempt to apply it rolls back the same way: dead-lettered, never committed. */
  | "rollback-create"
  /** Rolls back: a rename onto the slug of another article (409). */
  | "conflict"
  /** Rolls back: nothing to delete (404). */
  | "ghost-delete";

const EXPECTED_STATUS: Record<Op, number> = {
  create: 202,
  update: 200,
  rename: 200,
  delete: 204,
  "rollback-update": 500,
  "rollback-create": 202,
  conflict: 409,
  "ghost-delete": 404,
};
const ROLLS_BACK: ReadonlySet<Op> = new Set(["rollback-update", "rollback-create", "conflict", "ghost-delete"]);
/** Ops that change an existing article. */
const NEEDS_TARGET: ReadonlySet<Op> = new Set(["update", "rename", "delete", "rollback-update", "conflict"]);
/** The acknowledged writes of round r are `PATTERN` from `4r` on. */
const PATTERN: readonly Op[] = [
  "create",
  "create",
  "update",
  "rollback-update",
  "rename",
  "conflict",
  "create",
  "delete",
  "rollback-create",
  "update",
  "ghost-delete",
  "create",
  "delete",
];
/** Writes sent together in every fourth round, each on its own article. */
const IN_FLIGHT_OPS: readonly Op[] = ["create", "update", "create", "delete", "rollback-update", "rename", "create"];

interface WriteRecord {
  round: number;
  index: number;
  op: Op;
  /** What the write's event is found by (`eventKeys`): every title is unique. */
  key: string;
  /** Unknown: the kill cut its answer off, so it may or may not have committed. */
  outcome: "acked" | "rolled back" | "unknown";
  /** The article's id (a create's once known). */
  articleId?: string;
  /** A create's slug; the slug an update leaves. */
  slug: string;
  /** The title a create or update sets. */
  title?: string;
}

/** The round's articles that exist (as far as acknowledged writes tell). */
interface Live {
  id: string;
  slug: string;
}

interface PlannedWrite {
  record: WriteRecord;
  method: "POST" | "PUT" | "DELETE";
  path: string;
  body?: unknown;
  /** Applies the acknowledged write to the round's live articles. */
  apply(response: Response): Promise<void>;
}

/** The keys of an event, one of which is the key of the write that made it. */
function eventKeys(event: WebhookEvent): string[] {
  const { article } = event.data;
  if (event.type !== "article.deleted") return [`${event.type} title:${article.title}`];
  return [`article.deleted id:${article.id}`, `article.deleted slug:${article.slug}`];
}

/** `op`, or a create when there are too few articles for it (the first write of a round is a create). */
function feasible(op: Op, index: number, live: readonly Live[]): Op {
  if (index === 0) return "create";
  if (op === "conflict") return live.length >= 2 ? op : "create";
  return NEEDS_TARGET.has(op) && live.length === 0 ? "create" : op;
}

function plan(
  round: number,
  index: number,
  op: Op,
  live: Live[],
  target = live[(round + index) % Math.max(1, live.length)] as Live,
): PlannedWrite {
  const tag = `r${round}-w${index}`;
  const title = ROLLS_BACK.has(op) && op !== "ghost-delete" ? `rollback ${tag}` : `title ${tag} ${op}`;
  const record = (fields: Pick<WriteRecord, "key" | "slug"> & Partial<WriteRecord>): WriteRecord => ({
    round,
    index,
    op,
    outcome: ROLLS_BACK.has(op) ? "rolled back" : "unknown",
    ...fields,
  });
  switch (op) {
    case "create":
    case "rollback-create": {
      const slug = `r${round}-n${index}`;
      const rec = record({ key: `article.created title:${title}`, slug, title });
      return {
        record: rec,
        method: "POST",
        path: ARTICLES,
        body: { title, slug, content: `<p>${title}</p>`, tags: [`r${round}`] },
        async apply(res) {
          rec.articleId = ((await res.json()) as { id: string }).id;
          if (op === "create") live.push({ id: rec.articleId, slug });
        },
      };
    }
    case "update":
    case "rename":
    case "rollback-update": {
      const slug = op === "rename" ? `${target.slug}-m${index}` : target.slug;
      return {
        record: record({ key: `article.updated title:${title}`, articleId: target.id, slug, title }),
        method: "PUT",
        path: `${ARTICLES}/${target.slug}`,
        body: { title, content: `<p>${title}</p>`, tags: [`r${round}`, `w${index}`], ...(op === "rename" && { slug }) },
        async apply() {
          target.slug = slug;
        },
      };
    }
    case "conflict": {
      const other = live.find((article) => article !== target) as Live;
      return {
        record: record({ key: `article.updated title:${title}`, articleId: target.id, slug: other.slug, title }),
        method: "PUT",
        path: `${ARTICLES}/${target.slug}`,
        body: { title, slug: other.slug },
        async apply() {},
      };
    }
    case "delete":
      return {
        record: record({ key: `article.deleted id:${target.id}`, articleId: target.id, slug: target.slug }),
        method: "DELETE",
        path: `${ARTICLES}/${target.slug}`,
        async apply() {
          live.splice(live.indexOf(target), 1);
        },
      };
    case "ghost-delete": {
      const slug = `r${round}-ghost${index}`;
      return {
        record: record({ key: `article.deleted slug:${slug}`, slug }),
        method: "DELETE",
        path: `${ARTICLES}/${slug}`,
        async apply() {},
      };
    }
  }
}

function send(url: string, headers: Record<string, string>, write: PlannedWrite): Promise<Response> {
  return fetch(`${url}${write.path}`, {
    method: write.method,
    headers,
    ...(write.body !== undefined && { body: JSON.stringify(write.body) }),
    signal: AbortSignal.timeout(10_000),
  });
}

const describeWrite = (w: WriteRecord) => `round ${w.round}, write ${w.index} (${w.op}, ${w.outcome}): ${w.key}`;

// ---------------------------------------------------------------------------------------------------

describe("webhooks: SIGKILL between a write's commit and its delivery", () => {
  let dataDir: string | undefined;
  let current: ChildProcess | undefined;
  const receivers = new Receivers();

  beforeAll(() => {
    // The child runs the built plugins and kernel; build them (incremental, fast when up to date).
    const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
    execFileSync(process.execPath, [tsc, "-b", TSCONFIG], { stdio: "inherit" });
  }, 120_000);

  afterAll(async () => {
    current?.kill("SIGKILL");
    await receivers.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  /** One round: a child, its writes, and the SIGKILL; returns the moment of the kill in words. */
  async function crashRound(round: number, receiverBase: string, writes: WriteRecord[]): Promise<string> {
    receivers.dropHeld();
    receivers.modes = { a: A_MODES[round % A_MODES.length] as Mode, b: B_MODES[round % B_MODES.length] as Mode };
    const served = await serve(dataDir as string, receiverBase);
    current = served.child;
    const headers = await writeHeaders(served.url);
    const live: Live[] = [];
    const count = 2 + ((round * 5) % 11);
    for (let index = 0; index < count; index++) {
      const write = plan(
        round,
        index,
        feasible(PATTERN[(round * 4 + index) % PATTERN.length] as Op, index, live),
        live,
      );
      const { op } = write.record;
      const res = await send(served.url, headers, write);
      const what = `round ${round}, write ${index} (${op} ${write.method} ${write.path})`;
      expect(res.status, `${what}: ${await res.clone().text()}`).toBe(EXPECTED_STATUS[op]);
      if (!ROLLS_BACK.has(op)) write.record.outcome = "acked";
      await write.apply(res);
      writes.push(write.record);
    }

    let moment = `${count} acknowledged writes`;
    let killed = false;
    const kill = () => {
      if (killed) return;
      killed = true;
      receivers.epoch++;
      served.child.kill("SIGKILL");
    };
    const inFlight: Array<{ write: PlannedWrite; response: Promise<Response | undefined> }> = [];
    if (round % 4 === 3) {
      // Writes on different articles sent at once; the kill comes as soon as a delivery of one of their
      // events goes out (or once all are answered): the others may or may not have committed by then.
      const used = new Set<Live>();
      for (let j = 0; j < 4 + (Math.floor(round / 4) % 3); j++) {
        let op = IN_FLIGHT_OPS[(round + j) % IN_FLIGHT_OPS.length] as Op;
        const target = live.find((article) => !used.has(article));
        if (NEEDS_TARGET.has(op) && !target) op = "create";
        if (NEEDS_TARGET.has(op)) used.add(target as Live);
        inFlight.push({ write: plan(round, count + j, op, live, target), response: Promise.resolve(undefined) });
      }
      const keys = new Set(inFlight.map(({ write }) => write.record.key));
      receivers.onArrival = (event) => {
        if (eventKeys(event).some((key) => keys.has(key))) kill();
      };
      for (const entry of inFlight) entry.response = send(served.url, headers, entry.write).catch(() => undefined);
      void Promise.all(inFlight.map(({ response }) => response)).then(kill);
      const fallback = setTimeout(kill, 5000);
      await served.exited;
      clearTimeout(fallback);
      receivers.onArrival = undefined;
      moment += `, then ${inFlight.map(({ write }) => write.record.op).join(" + ")} in flight`;
    } else {
      const delay = KILL_DELAYS[round % KILL_DELAYS.length] as number;
      if (delay > 0) await sleep(delay);
      moment += `, killed ${delay} ms after the last acknowledgement`;
    }
    kill();
    expect(await served.exited).toBe("SIGKILL");
    current = undefined;

    for (const { write, response } of inFlight) {
      const res = await response;
      const { record } = write;
      if (res?.status === EXPECTED_STATUS[record.op]) {
        if (!ROLLS_BACK.has(record.op)) record.outcome = "acked";
        await write.apply(res);
      } else if (res) {
        throw new Error(`in-flight ${record.op} answered ${res.status}: ${await res.text()}`);
      }
      writes.push(record);
    }
    return `${moment} (receivers a=${receivers.modes.a}, b=${receivers.modes.b})`;
  }

  /** The restart after the last kill: waits until the outbox drained; returns the articles stored. */
  async function finalRestart(receiverBase: string, writes: WriteRecord[]): Promise<Map<string, ListedArticle>> {
    receivers.dropHeld();
    receivers.modes = { a: "ok", b: "ok" };
    const served = await serve(dataDir as string, receiverBase);
    current = served.child;
    const { url } = served;
    // Creates whose 202 never arrived may still be queued: reading the slug applies them now.
    for (const write of writes.filter((w) => w.op === "create" && w.outcome === "unknown")) {
      await fetch(`${url}${ARTICLES}/${write.slug}`, { signal: AbortSignal.timeout(10_000) });
    }
    const queued = new Set(writes.flatMap((w) => (w.op.endsWith("create") && w.articleId ? [w.articleId] : [])));
    const deadline = Date.now() + 30_000;
    for (;;) {
      for (const id of queued) {
        if ((await getJson<{ status: string }>(`${url}/api/v1/jobs/${id}`)).status !== "queued") queued.delete(id);
      }
      // Once no create is left to apply, every committed event is in the outbox: wait until its
      // fan-out has made them deliveries and none of those is left.
      const pending = await getJson<{ deliveries: unknown[] }>(
        `${url}/admin/webhooks/deliveries?status=pending&limit=1`,
      );
      const { fan_out } = await getJson<{ fan_out: { waiting: number } }>(`${url}/health/webhooks`);
      if (queued.size === 0 && fan_out.waiting === 0 && pending.deliveries.length === 0) break;
      if (Date.now() > deadline) throw new Error(`after 30 s: ${queued.size} creates queued, deliveries pending`);
      await sleep(50);
    }
    const dead = await getJson<{ deliveries: unknown[] }>(`${url}/admin/webhooks/deliveries?status=dead&limit=100`);
    expect(dead.deliveries, "dead-lettered deliveries").toEqual([]);
    for (const write of writes.filter((w) => w.op === "rollback-create")) {
      const job = await getJson<{ status: string }>(`${url}/api/v1/jobs/${write.articleId}`);
      expect(job.status, `${describeWrite(write)}: its job`).toBe("failed");
    }
    const stored = await listArticles(url);
    served.child.kill("SIGKILL");
    await served.exited;
    current = undefined;
    return stored;
  }

  it("after 20 kills and a restart, every committed change is delivered at least once and no rolled-back one", async () => {
    dataDir = await mkdtemp(join(tmpdir(), "vellum-webhooks-crash-"));
    const receiverBase = await receivers.listen();
    const writes: WriteRecord[] = [];
    const moments: string[] = [];
    for (let round = 0; round < ROUNDS; round++) moments.push(await crashRound(round, receiverBase, writes));
    expect(new Set(moments).size, moments.join("\n")).toBe(ROUNDS);
    for (const op of Object.keys(EXPECTED_STATUS))
      expect(
        writes.some((w) => w.op === op),
        `a ${op}`,
      ).toBe(true);
    const stored = await finalRestart(receiverBase, writes);

    // Every arrival is signed, its headers name its body's event, and an event id always carries one body.
    const events = new Map<string, WebhookEvent>();
    const bodies = new Map<string, string>();
    for (const arrival of receivers.arrivals) {
      expect(arrival.verified, `signature of ${arrival.raw}`).toBe(true);
      const event = JSON.parse(arrival.raw) as WebhookEvent;
      expect(arrival.delivery, arrival.raw).toBe(event.id);
      expect(arrival.eventType, arrival.raw).toBe(event.type);
      expect(arrival.raw, `another body for event ${event.id}`).toBe(bodies.get(event.id) ?? arrival.raw);
      bodies.set(event.id, arrival.raw);
      events.set(event.id, event);
    }

    // Writes against events: an acknowledged change has exactly one event id, a rolled-back one none, and
    // no event is left that no write explains.
    const byKey = new Map<string, string[]>();
    for (const event of events.values()) {
      for (const key of eventKeys(event)) byKey.set(key, [...(byKey.get(key) ?? []), event.id]);
    }
    const writeOf = new Map<string, WriteRecord>();
    for (const write of writes) {
      const ids = byKey.get(write.key) ?? [];
      if (write.outcome === "acked") expect(ids.length, `event ids of ${describeWrite(write)}`).toBe(1);
      else if (write.outcome === "rolled back") expect(ids, `events of ${describeWrite(write)}`).toEqual([]);
      else expect(ids.length, `event ids of ${describeWrite(write)}`).toBeLessThanOrEqual(1);
      const [id] = ids;
      if (id === undefined) continue;
      writeOf.set(id, write);
      if (write.op === "create") write.articleId ??= (events.get(id) as WebhookEvent).data.article.id;
    }
    for (const event of events.values()) {
      expect(writeOf.has(event.id), `event no write explains: ${bodies.get(event.id)}`).toBe(true);
    }

    // Each event reached each receiver (answered 2xx) at least once; first deliveries in commit (id) order.
    for (const receiver of RECEIVERS) {
      const delivered = receivers.arrivals
        .filter((arrival) => arrival.receiver === receiver && arrival.deliveredSeq !== undefined)
        .sort((x, y) => (x.deliveredSeq as number) - (y.deliveredSeq as number))
        .map((arrival) => arrival.delivery as string);
      const firsts = [...new Set(delivered)];
      const missing = [...events.keys()].filter((id) => !firsts.includes(id));
      expect(
        missing.map((id) => describeWrite(writeOf.get(id) as WriteRecord)),
        `events never delivered to ${receiver}`,
      ).toEqual([]);
      expect(firsts, `order of first deliveries to ${receiver}`).toEqual([...firsts].sort());
    }

    // A write whose answer the kill cut off committed exactly when its event was delivered.
    for (const write of writes.filter((w) => w.outcome === "unknown")) {
      const article =
        write.op === "create"
          ? [...stored.values()].find((a) => a.slug === write.slug)
          : stored.get(write.articleId as string);
      const committed =
        write.op === "delete" ? !article : write.op === "create" ? !!article : article?.title === write.title;
      expect(committed, `${describeWrite(write)}: committed, as its event shows`).toBe(byKey.has(write.key));
    }

    // Per article, the events in id order are its writes in the order they were made, and replaying them
    // gives exactly what the database holds.
    const history = new Map<string, WebhookEvent[]>();
    for (const event of [...events.values()].sort((x, y) => (x.id < y.id ? -1 : 1))) {
      const id = event.data.article.id;
      history.set(id, [...(history.get(id) ?? []), event]);
    }
    for (const [id, list] of history) {
      const order = list.map((event) => {
        const write = writeOf.get(event.id) as WriteRecord;
        return write.round * 1000 + write.index;
      });
      expect(order, `events of article ${id}`).toEqual([...order].sort((x, y) => x - y));
      const last = list.at(-1) as WebhookEvent;
      if (last.type === "article.deleted") {
        expect(stored.get(id), `article ${id}, deleted by its last event`).toBeUndefined();
      } else {
        const { content: _content, ...shown } = last.data.article;
        expect(stored.get(id), `article ${id}, as its last event shows it`).toEqual(shown);
      }
    }
    for (const id of stored.keys()) expect(history.has(id), `article ${id} without events`).toBe(true);

    // Each kill left committed events undelivered, and the restarts sent some again.
    for (let round = 0; round < ROUNDS; round++) {
      const undelivered = writes.filter((write) => {
        if (write.round !== round || write.outcome !== "acked") return false;
        const [id] = byKey.get(write.key) ?? [];
        return RECEIVERS.some(
          (receiver) =>
            !receivers.arrivals.some(
              (a) => a.delivery === id && a.receiver === receiver && a.deliveredSeq !== undefined && a.epoch <= round,
            ),
        );
      });
      expect(
        undelivered.length,
        `round ${round} (${moments[round]}): committed, undelivered at the kill`,
      ).toBeGreaterThan(0);
    }
    const seen = new Set<string>();
    let again = 0;
    for (const { receiver, delivery } of receivers.arrivals) {
      if (seen.has(`${receiver} ${delivery}`)) again++;
      seen.add(`${receiver} ${delivery}`);
    }
    expect(again, "deliveries sent again").toBeGreaterThan(0);
  }, 120_000);
});
