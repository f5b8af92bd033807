import { performance } from "node:perf_hooks";
import { rng } from "../search/corpus.mjs";
import { articleBody, TAGS } from "../scenarios/articles-data.mjs";
import { hostileRequests } from "./hostile.mjs";
import { mediaFile } from "./media.mjs";

/**
 * The soak's client: a weighted mix of every public route, with a model of what the service must
 * hold. Operations on one slug never overlap, so the model is exact: a create answered 202 makes
 * the slug live with its title, an update answered 200 changes the title, a delete answered 204
 * removes it, and a read must agree with all of that at once (through the response cache). A write
 * whose answer was lost (the server was killed under it) makes its slug uncertain: no later
 * operation touches it, and the final check accepts either outcome for it.
 */

/** Weights of the operations in the mix. */
const MIX = {
  read: 34,
  list: 9,
  create: 16,
  update: 10,
  delete: 3,
  job: 5,
  search: 3,
  csrf: 2,
  media: 1,
  mediaRead: 3,
  hostile: 9,
  conflict: 1,
  health: 2,
};
const OPS = Object.entries(MIX).flatMap(([op, weight]) => Array.from({ length: weight }, () => op));
const SEARCH_WORDS = ["article", "topic", "read", "more", "lorem", "vellum", "zzzz"];

/**
 * @typedef {{ title: string, live: boolean, busy: boolean, uncertain: boolean }} SlugState
 * @typedef {{ status: number, headers: Headers, text: string, ms: number }} Answer
 */

export class Traffic {
  /** @param {{ apiKey: string, seed?: number, maxArticles: number }} options */
  constructor({ apiKey, seed = 1, maxArticles }) {
    this.apiKey = apiKey;
    this.maxArticles = maxArticles;
    this.live = 0;
    this.random = rng(seed);
    /** @type {string[]} the servers' URLs; each request goes to the next in turn */
    this.urls = [];
    this.turn = 0;
    /** @type {Record<string, string>} */
    this.writeHeaders = {};
    /** @type {Map<string, SlugState>} */
    this.model = new Map();
    /** @type {string[]} job ids of recent creates */
    this.jobs = [];
    /** @type {string[]} media URLs answered 201 or 200 */
    this.media = [];
    this.created = 0;
    this.inFlight = 0;
    /** Events the receivers must see: certain ones, and those of writes whose answer was lost. */
    this.events = { "article.created": 0, "article.updated": 0, "article.deleted": 0, uncertain: 0 };
    /** @type {Map<string, Map<number, number>>} answers by operation and status (0: no answer) */
    this.statuses = new Map();
    /** @type {Map<string, number[]>} milliseconds by operation */
    this.latency = new Map();
    /** @type {string[]} the first unexpected answers, described */
    this.unexpected = [];
    this.unexpectedCount = 0;
  }

  /**
   * Points the client at the (re)started servers, one or several on one data dir, and takes a CSRF
   * token for the writes (every process signs with the data dir's secret, so one token serves all).
   */
  async connect(urls) {
    this.urls = urls;
    const { token } = await (await fetch(`${urls[0]}/api/v1/csrf`)).json();
    this.writeHeaders = {
      authorization: `Bearer ${this.apiKey}`,
      cookie: `svc_csrf=${token}`,
      "x-csrf-token": token,
    };
  }

  /** Starts one operation of the mix; resolves when it has been answered and checked. */
  async step() {
    const op = OPS[Math.floor(this.random() * OPS.length)] ?? "read";
    this.inFlight++;
    try {
      await this.#run(op);
    } finally {
      this.inFlight--;
    }
  }

  async #run(op) {
    switch (op) {
      case "read":
        return this.#read();
      case "list":
        return this.#check("list", await this.#get(`/api/v1/articles?limit=20&tag=${this.#pick(TAGS)}`), [200]);
      case "create":
        // Past `maxArticles` live ones, a create becomes a delete: the data set stops growing.
        return this.live >= this.maxArticles ? this.#delete() : this.#create();
      case "update":
        return this.#update();
      case "delete":
        return this.#delete();
      case "job": {
        const id = this.#pick(this.jobs.slice(-200));
        return id ? this.#check("job", await this.#get(`/api/v1/jobs/${id}`), [200]) : undefined;
      }
      case "search":
        // 10 searches a second per client (contract §4): a burst of the random mix may meet the limit.
        return this.#check("search", await this.#get(`/api/v1/search?q=${this.#pick(SEARCH_WORDS)}`), [200, 429]);
      case "csrf":
        return this.#check("csrf", await this.#get("/api/v1/csrf"), [200]);
      case "media":
        return this.#upload();
      case "mediaRead": {
        const url = this.#pick(this.media);
        return url ? this.#check("mediaRead", await this.#get(new URL(url, "http://host").pathname), [200]) : undefined;
      }
      case "conflict":
        return this.#conflict();
      case "hostile": {
        const request = this.#pick(hostileRequests(this.writeHeaders));
        const answer = await this.#send(request.method, request.path, request.body, request.headers);
        return this.#check(`hostile ${request.name}`, answer, request.expect);
      }
      default:
        return this.#check("health", await this.#get(this.#pick(["/health", "/health/ready", "/metrics"])), [200]);
    }
  }

  async #read() {
    const slug = this.#slug((state) => !state.busy && !state.uncertain);
    if (!slug) return;
    const state = this.#hold(slug);
    try {
      const answer = await this.#get(`/api/v1/articles/${slug}`);
      if (!this.#check("read", answer, [state.live ? 200 : 404])) return;
      if (state.live && JSON.parse(answer.text).title !== state.title)
        this.#fail("read", answer, `title ${JSON.stringify(JSON.parse(answer.text).title)}, expected ${state.title}`);
    } finally {
      state.busy = false;
    }
  }

  async #create() {
    const n = ++this.created;
    // Now and then a deleted slug comes back.
    const again =
      this.random() < 0.3 ? this.#slug((state) => !state.live && !state.busy && !state.uncertain) : undefined;
    const slug = again ?? `soak-${n}`;
    const state = this.#hold(slug);
    try {
      const body = articleBody(slug, n);
      const answer = await this.#write("POST", "/api/v1/articles", body);
      if (answer.status === 0) return this.#lost(state, "create", answer);
      if (!this.#check("create", answer, [202])) return;
      this.jobs.push(JSON.parse(answer.text).id);
      if (this.jobs.length > 1000) this.jobs.splice(0, 500);
      Object.assign(state, { title: body.title, live: true });
      this.live++;
      this.events["article.created"]++;
    } finally {
      state.busy = false;
    }
  }

  async #update() {
    const slug = this.#slug((state) => state.live && !state.busy && !state.uncertain);
    if (!slug) return;
    const state = this.#hold(slug);
    try {
      const title = `Updated ${slug} ${Math.floor(this.random() * 1e9)}`;
      const answer = await this.#write("PUT", `/api/v1/articles/${slug}`, { title });
      if (answer.status === 0) return this.#lost(state, "update", answer);
      if (!this.#check("update", answer, [200])) return;
      state.title = title;
      this.events["article.updated"]++;
    } finally {
      state.busy = false;
    }
  }

  async #delete() {
    const slug = this.#slug((state) => state.live && !state.busy && !state.uncertain);
    if (!slug) return;
    const state = this.#hold(slug);
    try {
      const answer = await this.#write("DELETE", `/api/v1/articles/${slug}`);
      if (answer.status === 0) return this.#lost(state, "delete", answer);
      if (!this.#check("delete", answer, [204])) return;
      state.live = false;
      this.live--;
      this.events["article.deleted"]++;
    } finally {
      state.busy = false;
    }
  }

  /** A create onto a live slug: 409, and nothing changes. */
  async #conflict() {
    const slug = this.#slug((state) => state.live && !state.busy && !state.uncertain);
    if (!slug) return;
    const state = this.#hold(slug);
    try {
      this.#check("conflict", await this.#write("POST", "/api/v1/articles", articleBody(slug, ++this.created)), [409]);
    } finally {
      state.busy = false;
    }
  }

  async #upload() {
    const form = new FormData();
    form.append("file", new Blob([mediaFile(this.random)], { type: "image/png" }), "soak.png");
    const answer = await this.#send("POST", "/api/v1/media", form, this.writeHeaders);
    if (this.#check("media", answer, [200, 201])) this.media.push(JSON.parse(answer.text).url);
  }

  /** A write whose answer never came: it may or may not have happened. */
  #lost(state, op, answer) {
    state.uncertain = true;
    this.events.uncertain++;
    this.#count(op, answer);
  }

  /** A random slug of the model whose state passes `filter` (a few tries), or undefined. */
  #slug(filter) {
    const slugs = [...this.model.keys()];
    for (let i = 0; i < 8 && slugs.length > 0; i++) {
      const slug = this.#pick(slugs);
      const state = slug === undefined ? undefined : this.model.get(slug);
      if (state && filter(state)) return slug;
    }
    return undefined;
  }

  /** Marks `slug` busy (adding it to the model as absent when new) and returns its state. */
  #hold(slug) {
    let state = this.model.get(slug);
    if (!state) {
      state = { title: "", live: false, busy: false, uncertain: false };
      this.model.set(slug, state);
    }
    state.busy = true;
    return state;
  }

  #pick(list) {
    return list[Math.floor(this.random() * list.length)];
  }

  #get(path) {
    return this.#send("GET", path);
  }

  #write(method, path, body) {
    const json = body === undefined ? undefined : JSON.stringify(body);
    const headers = { ...this.writeHeaders, ...(json ? { "content-type": "application/json" } : {}) };
    return this.#send(method, path, json, headers);
  }

  /** @returns {Promise<Answer>} status 0 when no answer came (the server is down or was killed) */
  async #send(method, path, body, headers = {}) {
    const started = performance.now();
    try {
      const url = this.urls[this.turn++ % this.urls.length];
      const res = await fetch(`${url}${path}`, { method, body, headers, signal: AbortSignal.timeout(30_000) });
      const text = await res.text();
      return { status: res.status, headers: res.headers, text, ms: performance.now() - started };
    } catch {
      return { status: 0, headers: new Headers(), text: "", ms: performance.now() - started };
    }
  }

  #count(op, answer) {
    const byStatus = this.statuses.get(op) ?? new Map();
    byStatus.set(answer.status, (byStatus.get(answer.status) ?? 0) + 1);
    this.statuses.set(op, byStatus);
    if (answer.status !== 0) {
      const list = this.latency.get(op) ?? [];
      list.push(answer.ms);
      this.latency.set(op, list);
    }
  }

  /**
   * Counts the answer; true when its status is one of `expect`. An error answer must be the
   * contract's envelope with the request id of its `X-Request-Id`. No answer at all (status 0) is
   * counted but not judged: the server was down (the soak kills it on purpose).
   */
  #check(op, answer, expect) {
    this.#count(op, answer);
    if (answer.status === 0) return false;
    if (!expect.includes(answer.status)) {
      this.#fail(op, answer, `status ${answer.status}, expected ${expect.join(" or ")}: ${answer.text.slice(0, 200)}`);
      return false;
    }
    if (answer.status >= 400) {
      const error = safeJson(answer.text)?.error;
      const id = answer.headers.get("x-request-id");
      if (!error?.code || !error.message || !id || error.request_id !== id)
        this.#fail(op, answer, `not the error envelope with its request id: ${answer.text.slice(0, 200)}`);
    }
    return true;
  }

  #fail(op, answer, what) {
    this.unexpectedCount++;
    if (this.unexpected.length < 20)
      this.unexpected.push(`${op}: ${what} (request id ${answer.headers.get("x-request-id")})`);
  }
}

function safeJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
