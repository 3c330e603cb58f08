// verifyWebhook against signatures computed here with node:crypto,
// independently of the library's Web Crypto code.

import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { describe, test } from "node:test";

import { AskbridgeError, verifyWebhook, WebhookVerificationError } from "../dist/index.js";

const SECRET = "whsec-current";
const OLD_SECRET = "whsec-previous";
const NOW = 1_700_000_000;

const BODY = JSON.stringify({
  id: "ask_0190c3a0e0007a5b8c9d0e1f2a3b4c5d",
  status: "answered",
  reason: null,
  answers: { deploy: ["Production"], note: ["Grüße — ✅"] },
  event: "ask.ended",
  deliveryId: "whd_0123456789abcdef0123456789abcdef",
});

function sign(secret, timestamp, body) {
  return createHmac("sha256", Buffer.from(secret, "utf8"))
    .update(`${timestamp}.`)
    .update(typeof body === "string" ? Buffer.from(body, "utf8") : body)
    .digest("hex");
}

function header(timestamp, ...secrets) {
  return [`t=${timestamp}`, ...secrets.map((s) => `v1=${sign(s, timestamp, BODY)}`)].join(",");
}

async function refused(promise, pattern) {
  await assert.rejects(promise, (error) => {
    assert.ok(error instanceof WebhookVerificationError, `expected WebhookVerificationError, got ${error}`);
    assert.ok(error instanceof AskbridgeError);
    assert.equal(error.name, "WebhookVerificationError");
    if (pattern) assert.match(error.message, pattern);
    return true;
  });
}

describe("verifyWebhook", () => {
  test("accepts a valid signature and returns the payload", async () => {
    const payload = await verifyWebhook(BODY, header(NOW, SECRET), SECRET, { now: NOW });
    assert.deepEqual(payload, JSON.parse(BODY));
    assert.equal(payload.event, "ask.ended");
  });

  test("accepts the body as bytes, and now as a Date", async () => {
    const bytes = new TextEncoder().encode(BODY);
    const payload = await verifyWebhook(bytes, header(NOW, SECRET), SECRET, { now: new Date(NOW * 1000) });
    assert.equal(payload.deliveryId, "whd_0123456789abcdef0123456789abcdef");
  });

  test("accepts within the tolerance, on either side of now", async () => {
    await verifyWebhook(BODY, header(NOW - 300, SECRET), SECRET, { now: NOW });
    await verifyWebhook(BODY, header(NOW + 300, SECRET), SECRET, { now: NOW });
    await verifyWebhook(BODY, header(NOW - 1000, SECRET), SECRET, { now: NOW, toleranceSeconds: 1000 });
  });

  test("accepts with the clock when now is not given", async () => {
    const t = Math.floor(Date.now() / 1000);
    await verifyWebhook(BODY, header(t, SECRET), SECRET);
  });

  test("rotation: several v1 in the header, several secrets on our side", async () => {
    // The daemon signs with the new and the old secret while rotating.
    const both = header(NOW, SECRET, OLD_SECRET);
    await verifyWebhook(BODY, both, SECRET, { now: NOW });
    await verifyWebhook(BODY, both, OLD_SECRET, { now: NOW });
    // The receiver knows both; the daemon signs with either.
    await verifyWebhook(BODY, header(NOW, OLD_SECRET), [SECRET, OLD_SECRET], { now: NOW });
    await verifyWebhook(BODY, header(NOW, SECRET), [OLD_SECRET, SECRET], { now: NOW });
  });

  test("ignores unknown items such as a future v2", async () => {
    const future = `t=${NOW},v2=${"ab".repeat(32)},v1=${sign(SECRET, NOW, BODY)},k=x`;
    await verifyWebhook(BODY, future, SECRET, { now: NOW });
  });

  test("refuses a tampered body", async () => {
    const tampered = BODY.replace("Production", "Staging");
    await refused(verifyWebhook(tampered, header(NOW, SECRET), SECRET, { now: NOW }), /no signature matches/);
    // One byte more at the end is a different body too.
    await refused(verifyWebhook(`${BODY} `, header(NOW, SECRET), SECRET, { now: NOW }));
  });

  test("refuses a wrong secret", async () => {
    await refused(verifyWebhook(BODY, header(NOW, SECRET), "whsec-wrong", { now: NOW }), /no signature matches/);
    await refused(verifyWebhook(BODY, header(NOW, SECRET), ["a", "b"], { now: NOW }));
  });

  test("refuses a timestamp the signature does not cover", async () => {
    const moved = `t=${NOW + 1},v1=${sign(SECRET, NOW, BODY)}`;
    await refused(verifyWebhook(BODY, moved, SECRET, { now: NOW }), /no signature matches/);
  });

  test("refuses an old timestamp, and one too far ahead", async () => {
    await refused(verifyWebhook(BODY, header(NOW - 301, SECRET), SECRET, { now: NOW }), /from now/);
    await refused(verifyWebhook(BODY, header(NOW + 301, SECRET), SECRET, { now: NOW }), /from now/);
    await refused(verifyWebhook(BODY, header(NOW - 61, SECRET), SECRET, { now: NOW, toleranceSeconds: 60 }));
  });

  test("refuses a missing or empty header", async () => {
    await refused(verifyWebhook(BODY, null, SECRET, { now: NOW }), /missing askbridge-signature/);
    await refused(verifyWebhook(BODY, undefined, SECRET, { now: NOW }), /missing/);
    await refused(verifyWebhook(BODY, "", SECRET, { now: NOW }), /missing/);
  });

  test("refuses an unparsable header", async () => {
    const v1 = `v1=${sign(SECRET, NOW, BODY)}`;
    for (const bad of [
      "garbage",
      v1, // no t
      `t=${NOW}`, // no v1
      `t=soon,${v1}`,
      `t=${NOW},t=${NOW},${v1}`,
      `t=${NOW},v1=not-hex`,
      `t=${NOW},=x,${v1}`,
    ]) {
      await refused(verifyWebhook(BODY, bad, SECRET, { now: NOW }), /unparsable|no signature/);
    }
  });

  test("refuses a signed body that is not JSON", async () => {
    const text = "not json";
    const h = `t=${NOW},v1=${sign(SECRET, NOW, text)}`;
    await refused(verifyWebhook(text, h, SECRET, { now: NOW }), /not JSON/);
  });

  test("needs a secret", async () => {
    await assert.rejects(verifyWebhook(BODY, header(NOW, SECRET), [], { now: NOW }), TypeError);
    await assert.rejects(verifyWebhook(BODY, header(NOW, SECRET), "", { now: NOW }), TypeError);
  });
});
