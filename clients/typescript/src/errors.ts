import type { Problem } from "./openapi.js";

/** The base class of every error this package throws on purpose. */
export class AskbridgeError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "AskbridgeError";
  }
}

/**
 * The daemon answered with a non-2xx status. `code`, `message` and `path`
 * are the daemon's `{"error": {code, message, path}}`; `errors` lists every
 * problem of a refused ask (`invalid_ask`).
 */
export class ApiError extends AskbridgeError {
  /** The HTTP status (404, 422, …). */
  readonly status: number;
  /** The stable snake_case code (`not_found`, `invalid_ask`, …). */
  readonly code: string;
  /** Where in the request the problem is (`questions[0].options`, `id`), or null. */
  readonly path: string | null;
  /** Every problem found, for a refused ask or notice; else empty. */
  readonly errors: Problem[];
  /** The parsed response body, or its text when it was not JSON. */
  readonly body: unknown;

  constructor(init: {
    status: number;
    code: string;
    message: string;
    path?: string | null;
    errors?: Problem[];
    body?: unknown;
  }) {
    super(init.message);
    this.name = "ApiError";
    this.status = init.status;
    this.code = init.code;
    this.path = init.path ?? null;
    this.errors = init.errors ?? [];
    this.body = init.body;
  }
}

/** A webhook request whose signature, timestamp or header does not check out. */
export class WebhookVerificationError extends AskbridgeError {
  constructor(message: string) {
    super(message);
    this.name = "WebhookVerificationError";
  }
}
