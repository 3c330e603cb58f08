// The client against a real daemon: asks on the built-in web channel,
// answered over the API (POST /v1/asks/{id}/reply).

import assert from "node:assert/strict";
import { createServer } from "node:net";
import { after, before, describe, test } from "node:test";

import { ApiError, AskbridgeError, Client, isAnswered, isEnded, isPending } from "../dist/index.js";
import { startDaemon, withTimeout } from "./daemon.mjs";

const QUESTIONS = [
  {
    id: "deploy",
    header: "Deploy",
    question: "Where should I deploy the build?",
    options: ["Staging (Recommended)", "Production"],
  },
  {
    id: "notify",
    header: "Notify",
    question: "Who should be told?",
    type: "multi",
    options: ["Team channel", "On-call", "Nobody"],
  },
  { id: "note", header: "Note", question: "Anything to add to the release notes?", type: "text" },
];

describe("client", () => {
  let daemon;
  let client;

  before(async () => {
    daemon = await startDaemon();
    client = new Client({ baseUrl: daemon.baseUrl });
  });
  after(async () => {
    await daemon?.stop();
  });

  test("ask, answer over the API, and read the outcome (single, multi, text)", async () => {
    const pending = await client.ask(QUESTIONS, { title: "Release 2.4" });
    assert.ok(isPending(pending));
    assert.equal(isEnded(pending), false);
    assert.match(pending.id, /^ask_[0-9a-f]+$/);
    assert.equal(pending.to, "web");
    assert.equal(pending.ask.title, "Release 2.4");
    assert.deepEqual(pending.open, ["deploy", "notify", "note"]);
    assert.deepEqual(pending.answered, []);
    assert.equal(typeof pending.hostKey, "string");
    assert.deepEqual(
      pending.ask.questions.map((q) => [q.id, q.type]),
      [
        ["deploy", "single"],
        ["notify", "multi"],
        ["note", "text"],
      ],
    );

    // Wait in the background, then answer: the long-poll wakes on the answer.
    const waiting = client.wait(pending.id, { timeoutSeconds: 30 });
    const reply = await client.reply(pending.id, {
      answers: { deploy: "production", notify: ["Team channel", "Nobody"], note: "Ship it.\nOn Friday." },
      user: { id: "alice", name: "Alice" },
    });
    assert.equal(reply.result, "answered");
    assert.deepEqual(reply.stillOpen, []);

    const ended = await withTimeout(waiting, 30_000, "wait() to return the ended ask");
    assert.ok(isEnded(ended));
    assert.ok(isAnswered(ended));
    assert.equal(ended.id, pending.id);
    assert.equal(ended.status, "answered");
    assert.equal(ended.reason, null);
    assert.deepEqual(ended.answers, {
      deploy: ["Production"],
      notify: ["Team channel", "Nobody"],
      note: ["Ship it.\nOn Friday."],
    });
    assert.deepEqual(
      ended.details.map(({ id, selected, values, other, via }) => ({ id, selected, values, other, via })),
      [
        { id: "deploy", selected: ["Production"], values: ["Production"], other: null, via: "web" },
        { id: "notify", selected: ["Team channel", "Nobody"], values: ["Team channel", "Nobody"], other: null, via: "web" },
        { id: "note", selected: [], values: ["Ship it.\nOn Friday."], other: null, via: "web" },
      ],
    );
    assert.equal(ended.answeredBy?.channel, "web");
    assert.equal(ended.answeredBy?.userId, "alice");
    assert.equal(ended.answeredBy?.name, "Alice");
    assert.ok(!Number.isNaN(Date.parse(ended.answeredAt)));
    assert.match(ended.text, /^Deploy: Production\nNotify: Team channel, Nobody\nNote: Ship it\./);
    assert.match(ended.continuation, /^User provided answers for "Release 2\.4"\./);
    assert.equal(ended.ask.title, "Release 2.4");

    // get() gives the same outcome.
    const again = await client.get(pending.id);
    assert.deepEqual(again.answers, ended.answers);
    assert.equal(again.status, "answered");
  });

  test("a typed text reply is resolved like a chat reply", async () => {
    const pending = await client.ask({ questions: [QUESTIONS[0]] });
    const reply = await client.reply(pending.id, { text: "2" });
    assert.equal(reply.result, "answered");
    assert.ok(isEnded(reply.ask));
    assert.deepEqual(reply.ask.answers, { deploy: ["Production"] });
    assert.equal(reply.ask.details[0].via, "text");
  });

  test("wait on ask() returns the pending ask when nobody answers in time", async () => {
    const started = Date.now();
    const pending = await client.ask([{ question: "Still there?", type: "confirm" }], { wait: 0.5 });
    assert.ok(Date.now() - started >= 400, "the daemon held the request for the wait");
    assert.ok(isPending(pending));
    const still = await client.wait(pending.id, { timeoutSeconds: 0.3 });
    assert.ok(isPending(still));
    await client.cancel(pending.id);
  });

  test("wait on ask() returns the outcome when the ask ends within it", async () => {
    // A channel the daemon does not have: the ask ends at once, undelivered.
    const ended = await client.ask([{ question: "Deploy?", options: ["Yes", "No"] }], {
      to: "telegram:123456789",
      wait: 10,
    });
    assert.ok(isEnded(ended));
    assert.equal(ended.status, "no_answer");
    assert.equal(ended.reason, "delivery_failed");
    assert.match(ended.failure ?? "", /telegram/);
    assert.equal(ended.answeredBy, null);
  });

  test("cancel ends a pending ask as no_answer / cancelled", async () => {
    const pending = await client.ask([{ question: "Deploy now?", type: "confirm" }]);
    const cancelled = await client.cancel(pending.id);
    assert.ok(isEnded(cancelled));
    assert.equal(cancelled.status, "no_answer");
    assert.equal(cancelled.reason, "cancelled");
    assert.deepEqual(cancelled.answers, {});
    assert.equal((await client.get(pending.id)).status, "no_answer");

    // Answering it now is refused.
    await assert.rejects(client.reply(pending.id, { text: "yes" }), (error) => {
      assert.ok(error instanceof ApiError);
      assert.equal(error.status, 409);
      assert.equal(error.code, "already_answered");
      return true;
    });
  });

  test("escalation and reminders go on the wire as the ask's own fields", async () => {
    const pending = await client.ask([{ question: "Ship?", type: "confirm" }], {
      timeoutSeconds: 1800,
      escalate: [{ afterSeconds: 600, to: ["slack:C0ONCALL", "web:oncall"] }],
      remindAfterSeconds: 300,
      remindEverySeconds: 300,
    });
    assert.ok(isPending(pending));
    assert.deepEqual(pending.ask.escalate, [
      { afterSeconds: 600, to: "slack:C0ONCALL" },
      { afterSeconds: 600, to: "web:oncall" },
    ]);
    assert.equal(pending.ask.remindAfterSeconds, 300);
    assert.equal(pending.ask.remindEverySeconds, 300);
    await client.cancel(pending.id);
  });

  test("list shows pending asks, newest first", async () => {
    const first = await client.ask([{ question: "First?", type: "confirm" }]);
    const second = await client.ask([{ question: "Second?", type: "confirm" }]);
    const pending = await client.list({ status: "pending", channel: "web", limit: 1000 });
    const ids = pending.map((a) => a.id);
    assert.ok(ids.indexOf(second.id) < ids.indexOf(first.id) && ids.indexOf(second.id) >= 0);
    assert.ok(pending.every(isPending));
    await client.cancel(first.id);
    await client.cancel(second.id);
    const after = await client.list({ status: "pending" });
    assert.ok(!after.some((a) => a.id === first.id || a.id === second.id));
  });

  test("an invalid ask is an ApiError with code, path and every problem", async () => {
    await assert.rejects(client.ask([{ question: "Deploy?", options: ["Staging"] }]), (error) => {
      assert.ok(error instanceof ApiError);
      assert.ok(error instanceof AskbridgeError);
      assert.equal(error.name, "ApiError");
      assert.equal(error.status, 422);
      assert.equal(error.code, "invalid_ask");
      assert.equal(error.path, "questions[0].options");
      assert.match(error.message, /at least 2 options/);
      assert.deepEqual(
        error.errors.map((e) => e.path),
        ["questions[0].options"],
      );
      return true;
    });
  });

  test("an unknown id is a 404 not_found at path id", async () => {
    await assert.rejects(client.get("ask_00000000000000000000000000000000"), (error) => {
      assert.ok(error instanceof ApiError);
      assert.equal(error.status, 404);
      assert.equal(error.code, "not_found");
      assert.equal(error.path, "id");
      return true;
    });
  });

  test("an unreachable daemon is an AskbridgeError, not an ApiError", async () => {
    // A port that was free a moment ago: nothing listens there.
    const server = createServer();
    await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address();
    await new Promise((resolve) => server.close(resolve));
    const nowhere = new Client({ baseUrl: `http://127.0.0.1:${port}/` });
    await assert.rejects(nowhere.get("ask_x"), (error) => {
      assert.ok(error instanceof AskbridgeError);
      assert.ok(!(error instanceof ApiError));
      return true;
    });
  });

  test("a custom fetch is used, and the token is sent as a bearer token", async () => {
    const seen = [];
    const spy = new Client({
      baseUrl: daemon.baseUrl,
      token: "not-needed-on-loopback",
      fetch: (input, init) => {
        seen.push({ url: String(input), init });
        return fetch(input, init);
      },
    });
    const pending = await spy.ask([{ question: "Spy?", type: "confirm" }]);
    await spy.cancel(pending.id);
    assert.equal(seen.length, 2);
    assert.equal(seen[0].url, `${daemon.baseUrl}/v1/asks`);
    assert.equal(seen[0].init.method, "POST");
    assert.equal(seen[0].init.headers.authorization, "Bearer not-needed-on-loopback");
    assert.equal(seen[1].init.method, "DELETE");
  });
});

describe("client with an API token", () => {
  let daemon;
  before(async () => {
    daemon = await startDaemon({ env: { ASKBRIDGE_API_TOKEN: "s3cret-token-for-tests" } });
  });
  after(async () => {
    await daemon?.stop();
  });

  test("no token is 401 unauthorized; the right one works", async () => {
    await assert.rejects(new Client({ baseUrl: daemon.baseUrl }).ask([{ question: "Hi?" }]), (error) => {
      assert.ok(error instanceof ApiError);
      assert.equal(error.status, 401);
      assert.equal(error.code, "unauthorized");
      return true;
    });
    const client = new Client({ baseUrl: daemon.baseUrl, token: "s3cret-token-for-tests" });
    const pending = await client.ask([{ question: "Hi?" }]);
    assert.ok(isPending(pending));
    assert.equal((await client.cancel(pending.id)).reason, "cancelled");
  });
});
