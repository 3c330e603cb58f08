// A serverless askbridge integration in one file: one route starts an ask
// and returns at once; askbridge calls the other when the ask ends.
// Written for the `export default { fetch }` style of Cloudflare Workers,
// Deno (`deno serve`) and Bun; see README.md.

import { Client, isEnded, verifyWebhook, WebhookVerificationError } from "askbridge";
import type { EndedAsk, WebhookPayload } from "askbridge";

interface Env {
  /** Where the daemon is, as this function reaches it: https://askbridge.example.com */
  ASKBRIDGE_URL: string;
  /** The daemon's API token (a daemon reachable from outside must have one). */
  ASKBRIDGE_API_TOKEN: string;
  /** The daemon's ASKBRIDGE_WEBHOOK_SECRET; while rotating, both, comma-separated. */
  ASKBRIDGE_WEBHOOK_SECRET: string;
}

const WEBHOOK_PATH = "/askbridge/webhook";

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    if (request.method === "POST" && url.pathname === "/deploy") return startAsk(request, env);
    if (request.method === "POST" && url.pathname === WEBHOOK_PATH) return receiveWebhook(request, env);
    return new Response("not found", { status: 404 });
  },
};

/** Starts the ask and answers 202 at once; the outcome comes to the webhook. */
async function startAsk(request: Request, env: Env): Promise<Response> {
  const { version } = (await request.json()) as { version: string };
  const client = new Client({ baseUrl: env.ASKBRIDGE_URL, token: env.ASKBRIDGE_API_TOKEN });
  const ask = await client.ask(
    [
      {
        id: "target",
        question: `Where should ${version} be deployed?`,
        options: ["Staging (Recommended)", "Production"],
      },
    ],
    {
      title: `Release ${version}`,
      to: "slack:C0123456789",
      timeoutSeconds: 1800,
      // This function's own webhook route. Its host must be in the daemon's
      // [webhooks] allowed_hosts, and it must be https.
      callbackUrl: new URL(WEBHOOK_PATH, request.url).toString(),
      // The same request retried makes no second ask.
      idempotencyKey: `deploy-${version}`,
    },
  );
  return Response.json({ askId: ask.id, status: ask.status }, { status: 202 });
}

/** Checks askbridge's signature, then acts on the outcome. */
async function receiveWebhook(request: Request, env: Env): Promise<Response> {
  const rawBody = await request.text(); // verify the bytes as sent, not re-serialised JSON
  let payload: WebhookPayload;
  try {
    payload = await verifyWebhook(
      rawBody,
      request.headers.get("askbridge-signature"),
      env.ASKBRIDGE_WEBHOOK_SECRET.split(",").map((s) => s.trim()),
    );
  } catch (error) {
    if (error instanceof WebhookVerificationError) return new Response("invalid signature", { status: 401 });
    throw error;
  }
  // Only ask.ended carries an outcome; other events (ask.posted, …) are news.
  if (payload.event !== "ask.ended" || !isEnded(payload)) return new Response(null, { status: 204 });

  // A delivery is retried until it gets a 2xx, so the same one may come
  // twice: remember payload.deliveryId (a KV store, a database row) and
  // skip one seen before. A 410 Gone tells askbridge to stop retrying.
  await act(payload);
  return new Response(null, { status: 204 });
}

async function act(outcome: EndedAsk): Promise<void> {
  if (outcome.status !== "answered") {
    console.log(`ask ${outcome.id} not answered: ${outcome.reason}`); // timeout, skipped, cancelled, delivery_failed
    return;
  }
  const [target] = outcome.answers.target ?? [];
  const by = outcome.answeredBy?.name ?? outcome.answeredBy?.userId ?? "someone";
  console.log(`${by} chose ${target} for ${outcome.ask.title ?? outcome.id}`);
  // … start the deployment here. Keep it short: askbridge waits 10 s for
  // the response, then retries; hand long work to a queue.
}
