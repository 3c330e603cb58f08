import { ApiError, AskbridgeError } from "./errors.js";
import type { Channel, ErrorBody, QuestionInput, ReplyRequest, ReplyResponse } from "./openapi.js";
import { isEnded } from "./types.js";
import type { Ask, AskBody } from "./types.js";

/** The longest wait the daemon holds one request for. */
export const MAX_WAIT_SECONDS = 3600;

/**
 * The longest wait this client puts in one request. Node's built-in fetch
 * gives up on a response whose headers take over 300 s, so longer waits
 * are split into several long-polls of at most this long.
 */
export const POLL_SECONDS = 240;

export interface ClientOptions {
  /** The daemon's address, e.g. `http://127.0.0.1:8790`. */
  baseUrl: string;
  /** The API token (`ASKBRIDGE_API_TOKEN`), sent as `Authorization: Bearer …`. */
  token?: string;
  /** The fetch to use; the global one by default. */
  fetch?: typeof globalThis.fetch;
}

/** Options of `Client.ask`: where and how to ask, and how long to wait. */
export interface AskOptions extends Omit<AskBody, "questions"> {
  /**
   * Seconds to wait for the outcome before returning (fractions allowed).
   * Without it, `ask` returns the pending ask at once.
   */
  wait?: number;
  /** Makes a retry return the ask created the first time (1–255 visible ASCII characters). */
  idempotencyKey?: string;
  /** Aborts the request(s). */
  signal?: AbortSignal;
}

export interface GetOptions {
  /** Seconds the daemon may hold the request while the ask is pending (0–3600). */
  wait?: number;
  signal?: AbortSignal;
}

export interface WaitOptions {
  /** Give up after this many seconds and return the ask as it is; without it, wait until it ends. */
  timeoutSeconds?: number;
  signal?: AbortSignal;
}

export interface ListOptions {
  /** `pending`, or `all` (the default). */
  status?: "pending" | "all";
  /** Only asks in a place on this channel. */
  channel?: Channel;
  /** At most this many (1–1000; 100 by default). */
  limit?: number;
  signal?: AbortSignal;
}

export interface CancelOptions {
  /** Why: `agent` (the default) or `answered_in_host`. */
  because?: "agent" | "answered_in_host";
  signal?: AbortSignal;
}

export interface ReplyOptions {
  /** The `hostKey` the ask's creation returned: makes the reply the agent host's own. */
  hostKey?: string;
  signal?: AbortSignal;
}

/**
 * A client for askbridge's HTTP API. Uses only `fetch`, so it runs on
 * Node ≥ 18, Deno, Bun and edge runtimes.
 *
 * ```ts
 * const client = new Client({ baseUrl: "http://127.0.0.1:8790" });
 * const ask = await client.ask([{ question: "Deploy?", options: ["Staging", "Production"] }], { wait: 600 });
 * if (isEnded(ask)) console.log(ask.status, ask.answers);
 * ```
 */
export class Client {
  readonly baseUrl: string;
  readonly #token: string | undefined;
  readonly #fetch: typeof globalThis.fetch;

  constructor(options: ClientOptions) {
    if (!options?.baseUrl) throw new TypeError("Client needs a baseUrl");
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.#token = options.token;
    const fetchImpl = options.fetch ?? globalThis.fetch;
    if (typeof fetchImpl !== "function") throw new TypeError("no fetch: pass one in ClientOptions.fetch");
    // Called unbound: some runtimes' fetch refuses a `this` that is not the global.
    this.#fetch = (input, init) => fetchImpl(input, init);
  }

  /**
   * Creates an ask: a list of questions, or a whole ask, with `options`
   * (`to`, `title`, `timeoutSeconds`, `callbackUrl`, …) laid over it.
   *
   * With `wait`, returns as soon as the ask ends (an `EndedAsk` with the
   * outcome) or when the wait is over (the `PendingAsk`). Waits longer than
   * `POLL_SECONDS` continue with `GET` long-polls. While the `POST` is held
   * open, closing it (aborting) cancels the ask on the daemon.
   */
  async ask(questionsOrAsk: QuestionInput[] | AskBody, options: AskOptions = {}): Promise<Ask> {
    const { wait, idempotencyKey, signal, ...fields } = options;
    const base: AskBody = Array.isArray(questionsOrAsk) ? { questions: questionsOrAsk } : questionsOrAsk;
    const body: AskBody = { ...base, ...dropUndefined(fields) };
    const started = Date.now();
    const headers: Record<string, string> = {};
    if (idempotencyKey !== undefined) headers["idempotency-key"] = idempotencyKey;
    const query = wait === undefined ? "" : `?wait=${seconds(Math.min(checkWait(wait), POLL_SECONDS))}`;
    const created = await this.#request<Ask>("POST", `/v1/asks${query}`, { body, headers, signal });
    if (wait === undefined || isEnded(created)) return created;
    const left = wait - (Date.now() - started) / 1000;
    if (left <= 0) return created;
    const later = await this.wait(created.id, { timeoutSeconds: left, signal });
    // The creation's own fields (warnings, hostKey) are only in its response.
    const warnings = created.warnings ? { warnings: created.warnings } : {};
    if (isEnded(later)) return { ...later, ...warnings };
    return { ...later, ...warnings, ...(created.hostKey ? { hostKey: created.hostKey } : {}) };
  }

  /**
   * Reads an ask; with `wait`, the daemon holds this one request until the
   * ask ends or the wait is over. Node's fetch gives up after 300 s: for
   * longer waits use `wait()`, which splits them.
   */
  async get(id: string, options: GetOptions = {}): Promise<Ask> {
    const query = options.wait === undefined ? "" : `?wait=${seconds(checkWait(options.wait))}`;
    return this.#request<Ask>("GET", `/v1/asks/${encodeURIComponent(id)}${query}`, { signal: options.signal });
  }

  /**
   * Long-polls the ask until it ends, or until `timeoutSeconds` have
   * passed (then returns it still pending). Never cancels the ask.
   */
  async wait(id: string, options: WaitOptions = {}): Promise<Ask> {
    const { timeoutSeconds, signal } = options;
    if (timeoutSeconds !== undefined && !(timeoutSeconds >= 0)) {
      throw new RangeError(`timeoutSeconds must be a number ≥ 0, got ${timeoutSeconds}`);
    }
    const deadline = timeoutSeconds === undefined ? Infinity : Date.now() + timeoutSeconds * 1000;
    for (;;) {
      const left = Math.max(0, (deadline - Date.now()) / 1000);
      const ask = await this.get(id, { wait: Math.min(left, POLL_SECONDS), signal });
      if (isEnded(ask) || Date.now() >= deadline) return ask;
    }
  }

  /** Asks, newest first, each as `get` shows it (without `places`). */
  async list(options: ListOptions = {}): Promise<Ask[]> {
    const params = new URLSearchParams();
    if (options.status !== undefined) params.set("status", options.status);
    if (options.channel !== undefined) params.set("channel", options.channel);
    if (options.limit !== undefined) params.set("limit", String(options.limit));
    const query = params.toString() ? `?${params}` : "";
    const { asks } = await this.#request<{ asks: Ask[] }>("GET", `/v1/asks${query}`, { signal: options.signal });
    return asks;
  }

  /** Cancels a pending ask (it ends as `no_answer` / `cancelled`); an ended ask is returned as it is. */
  async cancel(id: string, options: CancelOptions = {}): Promise<Ask> {
    const query = options.because ? `?because=${encodeURIComponent(options.because)}` : "";
    return this.#request<Ask>("DELETE", `/v1/asks/${encodeURIComponent(id)}${query}`, { signal: options.signal });
  }

  /**
   * Answers an ask, as the web page does: `{text}`, `{answers}` or
   * `{skip: true}`, optionally with the `user` who answers.
   */
  async reply(id: string, body: ReplyRequest, options: ReplyOptions = {}): Promise<ReplyResponse> {
    const headers: Record<string, string> = {};
    if (options.hostKey !== undefined) headers["askbridge-host-key"] = options.hostKey;
    return this.#request<ReplyResponse>("POST", `/v1/asks/${encodeURIComponent(id)}/reply`, {
      body,
      headers,
      signal: options.signal,
    });
  }

  async #request<T>(
    method: string,
    path: string,
    init: { body?: unknown; headers?: Record<string, string>; signal?: AbortSignal | undefined },
  ): Promise<T> {
    const headers: Record<string, string> = { accept: "application/json", ...init.headers };
    if (this.#token) headers.authorization = `Bearer ${this.#token}`;
    let payload: string | undefined;
    if (init.body !== undefined) {
      headers["content-type"] = "application/json";
      payload = JSON.stringify(init.body);
    }
    const url = this.baseUrl + path;
    let response: Response;
    try {
      response = await this.#fetch(url, { method, headers, body: payload, signal: init.signal ?? null });
    } catch (error) {
      if (init.signal?.aborted) throw error;
      throw new AskbridgeError(`${method} ${url}: ${error instanceof Error ? error.message : String(error)}`, {
        cause: error,
      });
    }
    const text = await response.text();
    let parsed: unknown;
    let isJson = true;
    try {
      parsed = text === "" ? undefined : JSON.parse(text);
    } catch {
      isJson = false;
      parsed = text;
    }
    if (!response.ok) throw apiError(response, parsed);
    if (!isJson || parsed === undefined) {
      throw new AskbridgeError(`${method} ${url}: expected JSON, got ${JSON.stringify(text.slice(0, 200))}`);
    }
    return parsed as T;
  }
}

function apiError(response: Response, body: unknown): ApiError {
  const error = (body as { error?: Partial<ErrorBody> } | undefined)?.error;
  if (error && typeof error === "object" && typeof error.code === "string") {
    return new ApiError({
      status: response.status,
      code: error.code,
      message: typeof error.message === "string" ? error.message : `HTTP ${response.status}`,
      path: typeof error.path === "string" ? error.path : null,
      errors: Array.isArray(error.errors) ? error.errors : [],
      body,
    });
  }
  // Not askbridge's own shape (a proxy in between, say).
  const text = typeof body === "string" ? body.trim().slice(0, 200) : "";
  return new ApiError({
    status: response.status,
    code: `http_${response.status}`,
    message: text || `HTTP ${response.status} ${response.statusText}`.trim(),
    body,
  });
}

function checkWait(wait: number): number {
  if (typeof wait !== "number" || !(wait >= 0)) throw new RangeError(`wait must be a number ≥ 0, got ${wait}`);
  return Math.min(wait, MAX_WAIT_SECONDS);
}

/** Seconds for a query: at most millisecond precision, no exponent. */
function seconds(value: number): string {
  return String(Math.round(value * 1000) / 1000);
}

function dropUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
