// A real MCP tasks client for askbridge's tests: the official TypeScript
// client (`@modelcontextprotocol/client`, pinned to protocol 2026-07-28)
// with the official tasks extension client (`@modelcontextprotocol/ext-tasks`).
//
// Usage:
//     ASKBRIDGE_TEST_NODE_MODULES=DIR node tasks_client.mjs SCENARIO URL
//
// DIR is the node_modules installed from this directory's package-lock.json
// (it need not be next to this file, so the packages are loaded from there
// by path).
// URL is the daemon's `/mcp`. Scenarios (every one calls ask_user with
// tests/mcp/deploy_ask.json and settles the task):
//     web      no forms: the task stays `working` until the test answers the
//              ask on the web (through askbridge's HTTP API)
//     form     shows forms: its elicitation handler answers the form the
//              task asks for (`input_required`) with Production
//     restart  shows forms, but hands the task off at once (printing its
//              serialized reference), waits for a line on standard input
//              (the test restarts the daemon meanwhile), then resumes the
//              task and answers its form
//
// Everything the client sees is printed to standard output as JSON lines,
// `{"event": ...}`, for the Rust test (tests/mcp_node.rs) to assert on;
// diagnostics go to standard error. It ends with `{"event": "done"}`, or
// `{"event": "error", ...}` and exit status 1.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";

/**
 * Imports `pkg` (or its `subpath` export) from ASKBRIDGE_TEST_NODE_MODULES,
 * by the ES module entry its package.json exports.
 */
async function load(pkg, subpath = ".") {
  const modules = process.env.ASKBRIDGE_TEST_NODE_MODULES;
  if (!modules) throw new Error("ASKBRIDGE_TEST_NODE_MODULES is not set");
  const dir = join(modules, pkg);
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  const entry = manifest.exports[subpath].import;
  const file = typeof entry === "string" ? entry : entry.default;
  return import(pathToFileURL(join(dir, file)).href);
}

const { Client, StreamableHTTPClientTransport } = await load("@modelcontextprotocol/client");
const { createTaskSessionFromClient } = await load(
  "@modelcontextprotocol/ext-tasks",
  "./client",
);

/** The protocol revision the client pins (stateless, per-request `_meta`). */
const PROTOCOL_VERSION = "2026-07-28";

/** Scopes serialized task references; the same across processes on purpose. */
const ENDPOINT_ID = "askbridge-test";

const CLIENT_INFO = { name: "askbridge-node-tests", version: "1.0.0" };

/** The ask every scenario sends (the Rust tests send it too). */
const ASK = JSON.parse(
  readFileSync(new URL("../mcp/deploy_ask.json", import.meta.url), "utf8"),
);

/** Prints one event line. */
function emit(event, fields = {}) {
  process.stdout.write(`${JSON.stringify({ event, ...fields })}\n`);
}

/** Client capabilities: form elicitation when the scenario shows forms. */
function capabilities(forms) {
  return forms ? { elicitation: { form: {} } } : {};
}

/**
 * Builds askbridge's `Mcp-Name` header value (SEP-2243): the tool name or
 * task id, Base64-wrapped when it is not plain printable ASCII.
 */
function mcpName(method, params) {
  const key =
    method === "tools/call" || method === "prompts/get"
      ? "name"
      : method.startsWith("tasks/")
        ? "taskId"
        : method.startsWith("resources/")
          ? "uri"
          : undefined;
  const value = key === undefined ? undefined : params?.[key];
  if (typeof value !== "string") return undefined;
  const plain = /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/.test(value);
  return plain ? value : `=?base64?${Buffer.from(value).toString("base64")}?=`;
}

/** Reads a JSON-RPC response out of a JSON or SSE body. */
async function readResponse(response, id) {
  const type = response.headers.get("content-type") ?? "";
  const text = await response.text();
  if (!type.includes("text/event-stream")) return JSON.parse(text);
  for (const event of text.split(/\r?\n\r?\n/)) {
    const data = event
      .split(/\r?\n/)
      .filter((line) => line.startsWith("data:"))
      .map((line) => line.slice(5).trimStart())
      .join("\n");
    if (data === "") continue;
    const message = JSON.parse(data);
    if (message.id === id) return message;
  }
  throw new Error(`no response to request ${id} in the event stream: ${text}`);
}

/**
 * The host's raw request path that ext-tasks needs for 2026-07-28 tasks
 * (`rawDispatch`): the SDK's own codecs reject the task wire shapes, so
 * `tools/call` and `tasks/*` go out as plain HTTP POSTs with the
 * 2026-07-28 headers. Ids are ours; the SDK never sees these requests.
 */
function rawDispatcher(url) {
  let nextId = 1;
  return async (request, options = {}) => {
    const id = `raw-${nextId++}`;
    // ext-tasks supplies `Mcp-Name` itself for tasks/*, in the context's
    // headers: those win over ours, whatever their case.
    const headers = new Headers({
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": PROTOCOL_VERSION,
      "mcp-method": request.method,
    });
    const name = mcpName(request.method, request.params);
    if (name !== undefined) headers.set("mcp-name", name);
    for (const [key, value] of Object.entries(options.context?.headers ?? {}))
      headers.set(key, value);
    const response = await fetch(url, {
      method: "POST",
      headers,
      body: JSON.stringify({ jsonrpc: "2.0", id, ...request }),
      signal: options.signal,
    });
    const message = await readResponse(response, id);
    if (message.error !== undefined) return { kind: "error", error: message.error };
    return { kind: "result", result: message.result };
  };
}

/** A connected client pinned to 2026-07-28 (`server/discover`, no session). */
async function connect(url, forms) {
  const client = new Client(CLIENT_INFO, {
    capabilities: capabilities(forms),
    versionNegotiation: { mode: { pin: PROTOCOL_VERSION } },
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  emit("connected", {
    era: client.getProtocolEra(),
    serverCapabilities: client.getServerCapabilities(),
  });
  return client;
}

/** A tasks session over `client`; `answer` (if any) fills in the form. */
function tasksSession(client, url, forms, answer) {
  return createTaskSessionFromClient(client, {
    endpointId: ENDPOINT_ID,
    rawDispatch: rawDispatcher(url),
    v2RequestFraming: {
      protocolVersion: PROTOCOL_VERSION,
      clientInfo: CLIENT_INFO,
      clientCapabilities: capabilities(forms),
    },
    onInputRequest: answer,
    onError: (error) => emit("session_error", { message: String(error) }),
  });
}

/** The elicitation handler of a host whose person picks Production. */
async function pickProduction(request, context) {
  emit("form", { kind: request.kind, params: request.params, taskId: context.taskId });
  return { action: "accept", content: { deploy_target: "Production" } };
}

/** Waits for a task execution to end, printing every task status it sees. */
async function settle(execution) {
  const { outcome } = await execution.settle({
    onEvent: (event) => {
      if (event.type === "task")
        emit("status", { status: event.task.status, taskId: event.task.taskId });
    },
  });
  emit("settled", {
    status: outcome.status,
    result: outcome.result,
    error: outcome.error === undefined ? undefined : String(outcome.error),
  });
}

/** Calls ask_user and prints the task it became. */
async function askUser(session) {
  const execution = await session.callTool("ask_user", ASK);
  emit("task", {
    kind: execution.kind,
    taskId: execution.handle?.taskId,
    reference: execution.kind === "task" ? execution.serializeReference() : undefined,
  });
  return execution;
}

/** The next line on standard input (the test's go-ahead). */
async function stdinLine() {
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) {
    lines.close();
    return line;
  }
  throw new Error("standard input closed");
}

/** Runs one of the scenarios named at the top. */
async function run(scenario, url) {
  const forms = scenario !== "web";
  const client = await connect(url, forms);
  const session = tasksSession(client, url, forms, forms ? pickProduction : undefined);
  try {
    const execution = await askUser(session);
    if (scenario === "restart") {
      let reference;
      await execution.handoff((ref) => {
        reference = ref;
      });
      emit("handed_off", { reference });
      await stdinLine();
      await settle(await session.resumeTask(reference));
    } else {
      await settle(execution);
    }
  } finally {
    await session.close();
    await client.close();
  }
}

const [scenario, url] = process.argv.slice(2);
if (!["web", "form", "restart"].includes(scenario) || url === undefined) {
  process.stderr.write("usage: node tasks_client.mjs web|form|restart URL\n");
  process.exit(2);
}
try {
  await run(scenario, url);
  emit("done");
} catch (error) {
  emit("error", { message: String(error), stack: error?.stack });
  process.exitCode = 1;
}
