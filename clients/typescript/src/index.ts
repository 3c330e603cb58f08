// askbridge: a client for the askbridge daemon's HTTP API, and a verifier
// for its webhooks. Only `fetch` and Web Crypto: Node, Deno, Bun, edge.

export { Client, MAX_WAIT_SECONDS, POLL_SECONDS } from "./client.js";
export type { AskOptions, CancelOptions, ClientOptions, GetOptions, ListOptions, ReplyOptions, WaitOptions } from "./client.js";
export { AskbridgeError, ApiError, WebhookVerificationError } from "./errors.js";
export { SIGNATURE_HEADER, verifyWebhook } from "./webhook.js";
export type { VerifyOptions } from "./webhook.js";
export { isAnswered, isEnded, isPending } from "./types.js";
export type * from "./types.js";
/** Every type of the daemon's OpenAPI document, as generated. */
export type * as openapi from "./openapi.js";
