import { AskbridgeError, WebhookVerificationError } from "./errors.js";
import type { WebhookPayload } from "./types.js";

/** The header askbridge signs its webhook requests with. */
export const SIGNATURE_HEADER = "askbridge-signature";

export interface VerifyOptions {
  /** How far the signature's time may be from now, in seconds; 300 by default. */
  toleranceSeconds?: number;
  /** The current time, as a Date or in Unix seconds; the clock by default. */
  now?: Date | number;
}

/**
 * Checks a webhook request from askbridge and returns its JSON payload.
 *
 * `rawBody` is the request body exactly as received (read it with
 * `await request.text()` or as bytes — never re-serialise parsed JSON);
 * `header` is the `askbridge-signature` header, `t=<unix seconds>,v1=<hex>`
 * with one `v1` per secret the daemon signs with. It passes when any `v1`
 * is the HMAC-SHA256 of `"<t>." + rawBody` under one of `secret` (pass a
 * list while rotating) and `t` is within `toleranceSeconds` of now.
 * Otherwise it throws `WebhookVerificationError`.
 *
 * Uses Web Crypto (`crypto.subtle`): Node ≥ 20, Deno, Bun, edge runtimes.
 */
export async function verifyWebhook(
  rawBody: string | Uint8Array,
  header: string | null | undefined,
  secret: string | string[],
  options: VerifyOptions = {},
): Promise<WebhookPayload> {
  const secrets = Array.isArray(secret) ? secret : [secret];
  if (secrets.length === 0 || secrets.some((s) => typeof s !== "string" || s === "")) {
    throw new TypeError("verifyWebhook needs at least one non-empty secret");
  }
  const tolerance = options.toleranceSeconds ?? 300;
  const { timestamp, signatures } = parseHeader(header);

  const body = typeof rawBody === "string" ? new TextEncoder().encode(rawBody) : rawBody;
  const prefix = new TextEncoder().encode(`${timestamp}.`);
  const signed = new Uint8Array(prefix.length + body.length);
  signed.set(prefix, 0);
  signed.set(body, prefix.length);

  const subtle = globalThis.crypto?.subtle;
  if (!subtle) throw new AskbridgeError("Web Crypto (crypto.subtle) is not available in this runtime");
  let matched = false;
  for (const key of secrets) {
    const expected = await hmacSha256(subtle, key, signed);
    for (const candidate of signatures) {
      // No early exit: every comparison takes the same time.
      matched = timingSafeEqual(expected, candidate) || matched;
    }
  }
  if (!matched) throw new WebhookVerificationError("no signature matches: wrong secret or altered body");

  const now = options.now instanceof Date ? options.now.getTime() / 1000 : (options.now ?? Date.now() / 1000);
  if (Math.abs(now - timestamp) > tolerance) {
    throw new WebhookVerificationError(
      `signature timestamp ${timestamp} is more than ${tolerance} s from now (${Math.floor(now)})`,
    );
  }

  let payload: unknown;
  try {
    payload = JSON.parse(typeof rawBody === "string" ? rawBody : new TextDecoder("utf-8", { fatal: true }).decode(body));
  } catch {
    throw new WebhookVerificationError("the signed body is not JSON");
  }
  if (payload === null || typeof payload !== "object" || Array.isArray(payload)) {
    throw new WebhookVerificationError("the signed body is not a JSON object");
  }
  return payload as WebhookPayload;
}

/** `t=1700000000,v1=ab…,v1=cd…` → the time and the v1 signatures (bytes). Unknown items are ignored. */
function parseHeader(header: string | null | undefined): { timestamp: number; signatures: Uint8Array[] } {
  if (header === null || header === undefined || header.trim() === "") {
    throw new WebhookVerificationError(`missing ${SIGNATURE_HEADER} header`);
  }
  let timestamp: number | undefined;
  const signatures: Uint8Array[] = [];
  for (const item of header.split(",")) {
    const at = item.indexOf("=");
    if (at <= 0) throw new WebhookVerificationError(`unparsable ${SIGNATURE_HEADER} header: ${JSON.stringify(item.trim())}`);
    const key = item.slice(0, at).trim();
    const value = item.slice(at + 1).trim();
    if (key === "t") {
      if (timestamp !== undefined || !/^\d{1,15}$/.test(value)) {
        throw new WebhookVerificationError(`unparsable ${SIGNATURE_HEADER} header: bad or repeated t`);
      }
      timestamp = Number(value);
    } else if (key === "v1") {
      const bytes = fromHex(value);
      if (bytes) signatures.push(bytes);
    }
  }
  if (timestamp === undefined) throw new WebhookVerificationError(`unparsable ${SIGNATURE_HEADER} header: no t`);
  if (signatures.length === 0) throw new WebhookVerificationError(`unparsable ${SIGNATURE_HEADER} header: no v1 signature`);
  return { timestamp, signatures };
}

async function hmacSha256(subtle: SubtleCrypto, secret: string, data: Uint8Array<ArrayBuffer>): Promise<Uint8Array> {
  const key = await subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  return new Uint8Array(await subtle.sign("HMAC", key, data));
}

/** Compares in time that depends only on the lengths. */
function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

function fromHex(hex: string): Uint8Array | undefined {
  if (hex.length === 0 || hex.length % 2 !== 0 || !/^[0-9a-fA-F]+$/.test(hex)) return undefined;
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return bytes;
}
