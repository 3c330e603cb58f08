// src/openapi.ts is scripts/generate.mjs's output for the daemon's live
// OpenAPI document: the types cannot drift from what the daemon serves.

import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { after, before, test } from "node:test";

import { DEFAULT_OUT, generate } from "../scripts/generate.mjs";
import { startDaemon } from "./daemon.mjs";

let daemon;
before(async () => {
  daemon = await startDaemon();
});
after(async () => {
  await daemon?.stop();
});

test("src/openapi.ts is generated from the daemon's /v1/openapi.json", async () => {
  const response = await fetch(`${daemon.baseUrl}/v1/openapi.json`);
  assert.equal(response.status, 200);
  const document = await response.json();
  assert.match(document.openapi, /^3\.1\./);

  const generated = generate(document);
  const checkedIn = await readFile(DEFAULT_OUT, "utf8");
  assert.ok(
    generated === checkedIn,
    "src/openapi.ts is out of date; regenerate it from a running daemon:\n" +
      "  node clients/typescript/scripts/generate.mjs http://ADDR/v1/openapi.json",
  );

  // The schemas the client is built on are there.
  for (const name of ["CanonicalAsk", "PendingAsk", "EndedAsk", "Outcome", "Detail", "Responder", "Error"]) {
    assert.match(generated, new RegExp(`export (interface|type) ${name}\\b`), name);
  }
});

test("the generator's mapping of JSON Schema to TypeScript", () => {
  const out = generate({
    components: {
      schemas: {
        Color: { type: "string", enum: ["red", "green"], description: "A colour." },
        Pair: { allOf: [{ $ref: "#/components/schemas/Thing" }, { type: "object", properties: { b: { type: "integer" } }, required: ["b"] }] },
        Thing: {
          type: "object",
          required: ["a"],
          properties: {
            a: { type: ["string", "null"] },
            list: { type: "array", items: { oneOf: [{ type: "string" }, { type: "boolean" }] } },
            map: { type: "object", additionalProperties: { type: "array", items: { type: "string" } } },
            "odd-name": { oneOf: [{ $ref: "#/components/schemas/Color", description: "Its colour." }, { type: "null" }] },
            yes: { type: "boolean", enum: [true] },
            anything: { description: "Whatever." },
          },
          additionalProperties: false,
        },
      },
    },
  });
  assert.match(out, /\/\*\* A colour\. \*\/\nexport type Color = "red" \| "green";/);
  assert.match(out, /export type Pair = Thing & \{\n  b: number;\n\};/);
  assert.match(out, /export interface Thing \{\n  a: string \| null;\n/);
  assert.match(out, /  list\?: Array<string \| boolean>;\n/);
  assert.match(out, /  map\?: Record<string, string\[\]>;\n/);
  assert.match(out, /  \/\*\* Its colour\. \*\/\n  "odd-name"\?: Color \| null;\n/);
  assert.match(out, /  yes\?: true;\n/);
  assert.match(out, /  \/\*\* Whatever\. \*\/\n  anything\?: unknown;\n/);
});
