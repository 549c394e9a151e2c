#!/usr/bin/env node
// A certification adapter written from the adapter protocol page alone (dsweb_ref/docs/adapter-protocol.md),
// with its own web_search implementation: no dsweb_ref code, only Node's standard library.
//
//   dsweb certify --adapter "node scripts/adapter_node.mjs" --profile seed-000-web-search --profile seed-001-search-api
//
// It implements the web_search tool (seed 000: a queries array, concurrent searches, round-robin merge,
// all-or-nothing after every sibling settled) over the DeepSeek Search API (seed 001) and the
// suite's conformance route. Requests are built with node:http and an explicit header set (fetch
// adds headers of its own), never follow redirects, and each runs on its own connection so that
// cancelling means closing it.
import http from "node:http";
import https from "node:https";
import readline from "node:readline";

const CAPABILITIES = ["web_search", "tool-schema", "search-api", "cancel", "scripted-search"];
const MAX_BODY = 32 * 1024 * 1024;
const MAX_TEXT = 20000; // model-visible characters, errors included
// Python's notion of whitespace (str.split/strip), which the spec's "blank" and "collapse" follow.
const WS = "\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const WS_RUN = new RegExp(`[${WS}]+`, "gu");
const BLANK = new RegExp(`^[${WS}]*$`, "u");

class WebError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

const points = (s) => Array.from(s);
const wellFormed = (s) => (typeof s === "string" ? s.toWellFormed() : s);
const collapse = (s) => s.replace(WS_RUN, " ").replace(new RegExp(`^[${WS}]+|[${WS}]+$`, "gu"), "");

function usableBase(base) {
  // An absolute http(s) base with a host and nothing after its path. A WHATWG parser reads
  // "http:///v1/tools" as host "v1", so the authority is checked on the raw string first.
  if (typeof base !== "string") return null;
  const text = base.trim();
  if (!text || /[\s\x00-\x1f\x7f?#]/u.test(text)) return null;
  const m = /^(https?):\/\/([^/@]+)(\/.*)?$/iu.exec(text);
  if (!m || m[2].startsWith(":")) return null;
  try {
    const url = new URL(text);
    if (!url.hostname || url.username || url.password) return null;
  } catch {
    return null;
  }
  return text.replace(/\/+$/u, "");
}

// One POST on its own connection; resolves {status, body} or rejects with a WebError. `signal`
// aborts it; `closed` resolves once its socket is gone, so a caller can wait for quiescence.
function post(url, payload, headers, timeoutS, signal, label) {
  const target = new URL(url);
  const body = Buffer.from(JSON.stringify(payload), "utf8");
  const client = target.protocol === "https:" ? https : http;
  let req;
  const closed = new Promise((resolve) => {
    req = client.request(target, {
      method: "POST",
      agent: false, // no pool: this request's connection closes with it
      headers: { ...headers, "Content-Length": String(body.length) },
    });
    req.on("close", resolve);
  });
  const answer = new Promise((resolve, reject) => {
    const fail = (code, message) => {
      req.destroy();
      reject(new WebError(code, message));
    };
    const timer = setTimeout(() => fail("WEB_PROVIDER_ERROR", `${label} did not answer within ${timeoutS}s`), timeoutS * 1000);
    const abort = () => fail("WEB_ABORTED", `${label}: cancelled`);
    if (signal.aborted) return abort();
    signal.addEventListener("abort", abort, { once: true });
    req.on("error", (e) => fail("WEB_PROVIDER_ERROR", `${label} request failed (${e.code || "network error"})`));
    req.on("response", (res) => {
      const chunks = [];
      let size = 0;
      res.on("data", (chunk) => {
        size += chunk.length;
        if (size > MAX_BODY) return fail("WEB_PROVIDER_ERROR", `${label} answer is over ${MAX_BODY} bytes`);
        chunks.push(chunk);
      });
      res.on("end", () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", abort);
        resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString("utf8") });
      });
      res.on("error", () => fail("WEB_PROVIDER_ERROR", `${label} answer was cut off`));
    });
    req.end(body);
  });
  return { answer, closed };
}

// The provider's own words never reach an error: an upstream body may echo the key in any encoding.
function statusError(label, status) {
  const lead = status === 401 ? "authentication failed" : status === 402 ? "reports insufficient balance"
    : status === 429 ? "rate limit reached" : status >= 500 ? "service error"
    : status >= 300 && status < 400 ? "redirected (redirects are not followed)" : "rejected the request";
  return new WebError("WEB_PROVIDER_ERROR", `${label} ${lead} (HTTP ${status})`);
}

function parse(label, body) {
  try {
    return JSON.parse(body);
  } catch {
    throw new WebError("WEB_PROVIDER_ERROR", `${label} answer is not JSON`);
  }
}

const isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);
const text = (v) => (typeof v === "string" && v ? wellFormed(v) : undefined);

class SearchApi {
  constructor(conf) {
    this.conf = conf;
    this.label = "DeepSeek Search API";
  }

  async search(query, maxResults, prompt, signal, track) {
    const base = usableBase(this.conf.tools_base);
    if (base === null) throw new WebError("WEB_PROVIDER_CONFIGURED_UNAVAILABLE", "the Search API base is blank or not an http(s) URL");
    const payload = { query: wellFormed(query), count: Math.min(this.conf.count, maxResults), need_content: false };
    if (this.conf.send_original_question && typeof prompt === "string") {
      const question = points(collapse(wellFormed(prompt))).slice(0, 128).join("").trimEnd();
      if (question) payload.ori_question = question;
    }
    const headers = { Authorization: `Bearer ${this.conf.api_key}`, "Content-Type": "application/json" };
    const call = post(`${base}/search`, payload, headers, this.conf.timeout_s, signal, this.label);
    track(call.closed);
    const reply = await call.answer;
    if (reply.status < 200 || reply.status >= 300) throw statusError(this.label, reply.status);
    const data = parse(this.label, reply.body);
    const bad = (why) => new WebError("WEB_PROVIDER_ERROR", `${this.label} answer is unusable: ${why}`);
    if (!isObject(data) || !Array.isArray(data.results)) throw bad("results is not a list");
    const sources = [];
    const seen = new Set();
    data.results.forEach((item, i) => {
      if (!isObject(item)) throw bad(`results[${i}] is not an object`);
      if (typeof item.url !== "string" || !item.url) throw bad(`results[${i}] has no url`);
      const url = wellFormed(item.url);
      if (seen.has(url)) return;
      seen.add(url);
      const source = { url };
      for (const [from, to] of [["title", "title"], ["snippet", "snippet"], ["date", "published_at"]]) {
        if (text(item[from]) !== undefined) source[to] = text(item[from]);
      }
      sources.push(source);
    });
    return { sources, truncated: false };
  }
}

class Scripted {
  constructor(conf) {
    this.conf = conf;
    this.label = "Scripted search";
  }

  async search(query, maxResults, _prompt, signal, track) {
    const base = usableBase(this.conf.scripted_base);
    if (base === null) throw new WebError("WEB_CONFIG_INVALID", "scripted_base is blank");
    const call = post(`${base}/search`, { query, max_results: maxResults }, { "Content-Type": "application/json" },
      this.conf.timeout_s, signal, this.label);
    track(call.closed);
    const reply = await call.answer;
    let data = null;
    try {
      data = JSON.parse(reply.body);
    } catch {
      if (reply.status >= 200 && reply.status < 300) throw new WebError("WEB_PROVIDER_ERROR", `${this.label}: not JSON`);
    }
    if (reply.status < 200 || reply.status >= 300) {
      const code = isObject(data) && isObject(data.error) ? data.error.code : undefined;
      const ok = typeof code === "string" && /^WEB_[A-Z_]{1,60}$/u.test(code);
      throw new WebError(ok ? code : "WEB_PROVIDER_ERROR", `${this.label} failed (HTTP ${reply.status})`);
    }
    const bad = (why) => new WebError("WEB_PROVIDER_ERROR", `${this.label} answer is unusable: ${why}`);
    if (!isObject(data) || !Array.isArray(data.sources)) throw bad("sources is not a list");
    const truncated = data.truncated ?? false;
    if (typeof truncated !== "boolean") throw bad("truncated is not a boolean");
    const sources = data.sources.map((item, i) => {
      if (!isObject(item) || typeof item.url !== "string" || !item.url) throw bad(`sources[${i}] has no url`);
      const source = { url: item.url };
      for (const name of ["title", "snippet", "published_at"]) {
        if (item[name] !== undefined && item[name] !== null && typeof item[name] !== "string") throw bad(`sources[${i}].${name}`);
        if (typeof item[name] === "string") source[name] = item[name];
      }
      return source;
    });
    const result = { sources, truncated };
    if (typeof data.content === "string") result.content = data.content;
    return result;
  }
}

function parseQueries(args, max) {
  const invalid = (m) => new WebError("WEB_INVALID_ARGUMENTS", m);
  if (!isObject(args)) throw invalid('"arguments" must be an object');
  if (!("queries" in args)) throw invalid('missing required property "queries"');
  const queries = args.queries;
  if (!Array.isArray(queries)) throw invalid('"queries" must be an array');
  if (queries.length === 0) throw invalid("queries must contain at least one query");
  if (queries.length > max) throw invalid(`queries must contain at most ${max} queries`);
  queries.forEach((q, i) => { if (typeof q !== "string") throw invalid(`queries[${i}] must be a string`); });
  if (queries.some((q) => BLANK.test(q))) throw invalid("each query must be a non-empty string");
  return [...new Set(queries)]; // exact duplicates only, first position kept
}

// Rank r of every query, in query order, before rank r+1; first occurrence of a URL wins; cap.
function merge(queries, results, cap) {
  const merged = [];
  const seen = new Set();
  let dropped = false;
  const deepest = Math.max(0, ...results.map((r) => r.sources.length));
  outer: for (let rank = 0; rank < deepest; rank++) {
    for (const r of results) {
      const s = r.sources[rank];
      if (s === undefined || seen.has(s.url)) continue;
      if (merged.length >= cap) { dropped = true; break outer; }
      seen.add(s.url);
      merged.push(s);
    }
  }
  const answers = queries.map((q, i) => [q, results[i].content]).filter(([, c]) => c)
    .map(([q, c]) => `### ${wellFormed(q)}\n\n${c}`);
  const out = { sources: merged, truncated: dropped || results.some((r) => r.truncated) };
  if (answers.length) out.content = answers.join("\n\n");
  return out;
}

const cut = (s, n) => { const p = points(s); return p.length <= n ? s : p.slice(0, n - 1).join("") + "…"; };
const short = (s, n) => cut(collapse(points(s).slice(0, n * 4 + 64).join("")), n);

function label(source) {
  if (source.title) return short(source.title, 200);
  try {
    const host = new URL(source.url).hostname;
    if (host) return cut(host, 200);
  } catch { /* not a URL with a host: show it raw */ }
  return cut(source.url, 2048);
}

function render(result) {
  const parts = [];
  if (result.content) parts.push(points(result.content).slice(0, MAX_TEXT + 1).join(""));
  if (result.sources.length) {
    parts.push("Sources:\n" + result.sources.map((s) => {
      const extras = [];
      if (s.snippet) extras.push(short(s.snippet, 500));
      if (s.published_at) extras.push(`(${short(s.published_at, 64)})`);
      return `- [${label(s)}](${cut(s.url, 2048)})` + (extras.length ? " — " + extras.join(" ") : "");
    }).join("\n"));
  } else if (!result.content) parts.push("No results found.");
  if (result.truncated) parts.push(`(Showing the first ${result.sources.length} sources.)`);
  parts.push("Cite the relevant URLs above as markdown links in your answer.");
  const all = parts.join("\n\n");
  if (points(all).length <= MAX_TEXT) return all;
  return points(all).slice(0, MAX_TEXT - 80).join("") + "\n\n(Output cut: later text and sources were left out.)";
}

// All queries at once; the first failure in time aborts the others; answer only once every
// request has closed, whether the batch succeeded, failed or was cancelled.
async function webSearch(state, params, signal) {
  const conf = state.conf;
  if (!conf) throw new WebError("WEB_CONFIG_INVALID", "configure was not called");
  const queries = parseQueries(params.arguments, conf.search_max_queries);
  const provider = conf.provider === "scripted" ? new Scripted(conf) : new SearchApi(conf);
  const batch = new AbortController();
  const onCancel = () => batch.abort();
  signal.addEventListener("abort", onCancel, { once: true });
  const closings = [];
  const track = (closed) => closings.push(closed);
  let first = null;
  const cap = conf.search_max_results;
  const runs = queries.map((q) => provider.search(q, cap, params.latest_prompt, batch.signal, track)
    // Every search is capped, a one-query call too: a provider may send more than it was asked for.
    .then((r) => (r.sources.length > cap ? { ...r, sources: r.sources.slice(0, cap), truncated: true } : r))
    .catch((error) => {
      if (first === null) { first = error; batch.abort(); }
      throw error;
    }));
  const settled = await Promise.allSettled(runs);
  await Promise.all(closings);
  signal.removeEventListener("abort", onCancel);
  if (signal.aborted) throw new WebError("WEB_ABORTED", "cancelled");
  if (first !== null) throw first;
  const results = settled.map((s) => s.value);
  const result = queries.length === 1 ? results[0] : merge(queries, results, cap);
  return { text: render(result), value: result };
}

const state = { conf: null };
const calls = new Map();
const write = (message) => process.stdout.write(JSON.stringify(message) + "\n");

function errorMessage(error) {
  if (error instanceof WebError) return { code: error.code, message: cut(`Error: ${error.message}`, MAX_TEXT) };
  return { code: "WEB_PROVIDER_ERROR", message: "Error: internal failure" };
}

async function runCall(id, params) {
  const controller = new AbortController();
  calls.set(id, controller);
  try {
    write({ id, result: await webSearch(state, params, controller.signal) });
  } catch (error) {
    write(controller.signal.aborted ? { id, cancelled: true } : { id, error: errorMessage(error) });
  } finally {
    calls.delete(id);
  }
}

// Seed 001: count is a configured value from 1 to 50; sendOriginalQuestion is a switch. Anything else is
// refused here, before it can reach a request.
function configure(id, params) {
  const count = params.count ?? 10;
  const send = params.send_original_question ?? true;
  if (!Number.isInteger(count) || count < 1 || count > 50) {
    write({ id, error: { code: "WEB_CONFIG_INVALID", message: "count must be an integer from 1 to 50" } });
  } else if (typeof send !== "boolean") {
    write({ id, error: { code: "WEB_CONFIG_INVALID", message: "send_original_question must be true or false" } });
  } else {
    state.conf = params;
    write({ id, result: {} });
  }
}

// What the model is shown of web_search under the current configuration (method tool_schema).
function toolSchema(id) {
  const cap = state.conf?.search_max_queries ?? 4;
  const description =
    `Search the web. Pass 1-${cap} distinct queries in the required queries array; ` +
    "they run concurrently and their sources are merged.";
  const inputSchema = {
    type: "object",
    required: ["queries"],
    properties: { queries: { type: "array", items: { type: "string" }, minItems: 1, maxItems: cap } },
  };
  const value = { name: "web_search", description, input_schema: inputSchema, guidance: null };
  write({ id, result: { text: description, value } });
}

const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on("line", (line) => {
  if (!line.trim()) return;
  const { id, method, params = {} } = JSON.parse(line);
  if (method === "hello") write({ id, result: { name: "adapter_node", version: "1", capabilities: CAPABILITIES } });
  else if (method === "configure") configure(id, params);
  else if (method === "web_search") runCall(id, params);
  else if (method === "tool_schema") toolSchema(id);
  else if (method === "cancel") { calls.get(params.id)?.abort(); write({ id, result: {} }); }
  else if (method === "shutdown") { write({ id, result: {} }); process.exit(0); }
  else write({ id, error: { code: "WEB_INVALID_ARGUMENTS", message: `unknown method ${method}` } });
});
lines.on("close", () => process.exit(0));
