// Microsoft's own check of what the Bot Connector posts to a bot, for
// askbridge's tests: `JwtTokenValidation.authenticateRequest` from
// `botframework-connector` (the Bot Framework SDK for JavaScript), with the
// OpenID metadata of the Bot Connector pointed at the test's local server.
// It proves the test tokens are shaped as Microsoft's validator reads them
// (tests/teams.rs), so askbridge's check and its tests cannot agree on a
// wrong shape.
//
// Usage:
//     ASKBRIDGE_TEST_NODE_MODULES=DIR node bot_token_check.mjs REQUEST
//
// DIR is the node_modules installed from this directory's package-lock.json.
// REQUEST, one JSON argument, names the metadata, the bot and the activity, and the
// `Authorization` headers to check, by name:
//     {"metadataUrl": "http://127.0.0.1:…/openid", "appId": "…",
//      "activity": {"channelId": "msteams", "serviceUrl": "…"},
//      "headers": {"NAME": "Bearer …", …}}
// Printed to standard output, one JSON object: for each name,
// {"accepted": true, "claims": {…}} or {"accepted": false, "error": "…"}.
// Anything else (a package missing, bad input) ends with exit status 1.

import { createRequire } from "node:module";
import { join } from "node:path";

const modules = process.env.ASKBRIDGE_TEST_NODE_MODULES;
if (!modules) throw new Error("ASKBRIDGE_TEST_NODE_MODULES is not set");
const require = createRequire(join(modules, "askbridge-tests.cjs"));
const {
  ChannelValidation,
  JwtTokenValidation,
  SimpleCredentialProvider,
} = require("botframework-connector");

const request = JSON.parse(process.argv[2]);
// The Bot Connector's metadata, here the test's.
ChannelValidation.OpenIdMetadataEndpoint = request.metadataUrl;
// The bot's app id; the password is not used to check what comes in.
const credentials = new SimpleCredentialProvider(request.appId, "not-used");

const results = {};
for (const [name, header] of Object.entries(request.headers)) {
  try {
    const identity = await JwtTokenValidation.authenticateRequest(
      request.activity,
      header,
      credentials,
      "",
    );
    const claims = Object.fromEntries(
      identity.claims.map((claim) => [claim.type, claim.value]),
    );
    results[name] = { accepted: identity.isAuthenticated === true, claims };
  } catch (error) {
    results[name] = { accepted: false, error: String(error?.message ?? error) };
  }
}
process.stdout.write(JSON.stringify(results) + "\n");
