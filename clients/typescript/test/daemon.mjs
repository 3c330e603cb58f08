// Test helpers: an `askbridge serve` of its own (the binary from
// ASKBRIDGE_BIN) on a free loopback port with a temporary data directory,
// and a promise with a deadline. Not a test file itself (not *.test.mjs).

import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

const LISTENING = /listening on (http:\/\/\S+)/;

/**
 * Starts the daemon and resolves once it prints `listening on http://ADDR`.
 * `config` is extra TOML appended to the config file; `env` extra
 * environment variables. Call `stop()` when done (the test's `after`).
 */
export async function startDaemon({ config = "", env = {}, startSeconds = 20 } = {}) {
  const bin = process.env.ASKBRIDGE_BIN;
  if (!bin) throw new Error("set ASKBRIDGE_BIN to the askbridge binary to test against");
  const dir = await mkdtemp(path.join(tmpdir(), "askbridge-ts-"));
  const configFile = path.join(dir, "askbridge.toml");
  const dataDir = path.join(dir, "data");
  await writeFile(
    configFile,
    `listen = "127.0.0.1:0"\ndata_dir = ${JSON.stringify(dataDir)}\n${config}\n`,
  );

  // A small, known environment: nothing from the caller's (no tokens, no
  // proxies, no chat platforms configured by accident).
  const child = spawn(bin, ["serve", "--config", configFile], {
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      NO_PROXY: "127.0.0.1,localhost",
      no_proxy: "127.0.0.1,localhost",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });

  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk) => {
    stderr = (stderr + chunk).slice(-20_000);
  });

  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await withTimeout(exited, 10_000, "askbridge serve to exit").catch(() => child.kill("SIGKILL"));
    await rm(dir, { recursive: true, force: true });
  };

  const listening = new Promise((resolve, reject) => {
    let out = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk) => {
      out += chunk;
      const match = LISTENING.exec(out);
      if (match) resolve(match[1]);
    });
    child.once("error", reject);
    exited.then(({ code, signal }) =>
      reject(new Error(`askbridge serve exited (${code ?? signal}) before listening; stderr:\n${stderr}`)),
    );
  });

  try {
    const baseUrl = await withTimeout(listening, startSeconds * 1000, "askbridge serve to listen");
    return { baseUrl, stop, stderr: () => stderr, dir };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** `promise`, or a rejection naming `what` after `ms` milliseconds. */
export function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
