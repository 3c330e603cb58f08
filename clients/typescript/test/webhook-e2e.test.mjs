// End to end: a daemon with webhooks on, a local receiver, an ask with a
// callbackUrl answered over the API; the receiver's request passes
// verifyWebhook. Follows the webhook contract (callbackUrl,
// askbridge-signature, [webhooks] allowed_hosts, ASKBRIDGE_WEBHOOK_SECRET).

import assert from "node:assert/strict";
import { createServer } from "node:http";
import { after, before, describe, test } from "node:test";

import { ApiError, Client, isEnded, verifyWebhook } from "../dist/index.js";
import { startDaemon, withTimeout } from "./daemon.mjs";

const NEW_SECRET = "whsec-e2e-new";
const OLD_SECRET = "whsec-e2e-old";

/** An HTTP server on 127.0.0.1 that records every request and answers 200. */
async function startReceiver() {
  const requests = [];
  const waiters = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      const request = {
        method: req.method,
        url: req.url,
        headers: req.headers,
        body: Buffer.concat(chunks),
      };
      requests.push(request);
      res.writeHead(200, { "content-type": "text/plain" }).end("ok");
      for (const waiter of waiters.splice(0)) waiter();
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();

  /** The first request that `match` accepts, as soon as it comes. */
  const next = (match) =>
    new Promise((resolve) => {
      const look = () => {
        const found = requests.find(match);
        if (found) resolve(found);
        else waiters.push(look);
      };
      look();
    });

  const close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return { url: `http://127.0.0.1:${port}/hook`, requests, next, close };
}

describe("webhooks end to end", () => {
  let receiver;
  let daemon;
  let client;

  before(async () => {
    receiver = await startReceiver();
    daemon = await startDaemon({
      config: '[webhooks]\nallowed_hosts = ["127.0.0.1"]\n',
      env: { ASKBRIDGE_WEBHOOK_SECRET: `${NEW_SECRET},${OLD_SECRET}` },
    });
    client = new Client({ baseUrl: daemon.baseUrl });
  });
  after(async () => {
    await daemon?.stop();
    await receiver?.close();
  });

  test("an answered ask with a callbackUrl is POSTed, signed, to the receiver", async () => {
    const pending = await client.ask(
      [
        { id: "deploy", question: "Deploy where?", options: ["Staging", "Production"] },
        { id: "notify", question: "Tell whom?", type: "multi", options: ["Team", "On-call", "Nobody"] },
      ],
      { callbackUrl: receiver.url, callbackEvents: ["ask.ended"] },
    );
    assert.equal(pending.status, "pending");
    assert.deepEqual(
      (pending.warnings ?? []).filter((w) => w.path.startsWith("callback")),
      [],
      "the daemon took callbackUrl and callbackEvents",
    );

    const shown = await client.get(pending.id);
    assert.equal(shown.callback?.url, receiver.url);
    assert.ok(shown.callback?.events.includes("ask.ended"));

    const delivered = receiver.next((r) => r.headers["askbridge-event"] === "ask.ended");
    const reply = await client.reply(pending.id, {
      answers: { deploy: "Production", notify: ["Team", "Nobody"] },
      user: { id: "bob", name: "Bob" },
    });
    assert.equal(reply.result, "answered");

    const request = await withTimeout(delivered, 30_000, "the ask.ended webhook");
    assert.equal(request.method, "POST");
    assert.equal(request.url, "/hook");
    assert.match(request.headers["content-type"], /^application\/json/);
    assert.match(request.headers["user-agent"], /^askbridge\//);
    const deliveryId = request.headers["askbridge-delivery"];
    assert.match(deliveryId, /^whd_[0-9a-f]{32}$/);
    assert.equal(request.headers["idempotency-key"], deliveryId);

    // The raw body and the header, as a receiver gets them.
    const signature = request.headers["askbridge-signature"];
    const payload = await verifyWebhook(new Uint8Array(request.body), signature, NEW_SECRET);
    // Signed with both secrets while rotating: the old one alone passes too,
    // and so does the body as a string.
    await verifyWebhook(request.body.toString("utf8"), signature, [OLD_SECRET]);
    assert.equal(signature.split(",").filter((item) => item.startsWith("v1=")).length, 2);

    assert.equal(payload.event, "ask.ended");
    assert.equal(payload.deliveryId, deliveryId);
    assert.equal(payload.id, pending.id);
    assert.ok(isEnded(payload));
    assert.equal(payload.status, "answered");
    assert.equal(payload.reason, null);
    assert.deepEqual(payload.answers, { deploy: ["Production"], notify: ["Team", "Nobody"] });
    assert.equal(payload.answeredBy?.userId, "bob");
    assert.equal(payload.ask.questions.length, 2);
    assert.equal(payload.to, "web");
    assert.equal(typeof payload.createdAt, "string");
    assert.ok(!("callback" in payload), "the webhook's body does not carry `callback`");

    // The ask records the delivery.
    const after = await client.get(pending.id);
    const delivery = after.callback?.deliveries.find((d) => d.id === deliveryId);
    assert.ok(delivery, "GET /v1/asks/{id} lists the delivery");
    assert.equal(delivery.event, "ask.ended");
    assert.ok(["pending", "delivered"].includes(delivery.state), delivery.state);
  });

  test("a callbackUrl on a host the daemon does not allow is a 422 at callbackUrl", async () => {
    await assert.rejects(
      client.ask([{ question: "Deploy?", type: "confirm" }], { callbackUrl: "https://hooks.example.invalid/askbridge" }),
      (error) => {
        assert.ok(error instanceof ApiError);
        assert.equal(error.status, 422);
        assert.equal(error.path, "callbackUrl");
        return true;
      },
    );
  });
});
