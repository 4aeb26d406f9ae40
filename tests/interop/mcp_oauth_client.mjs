// The official MCP TypeScript SDK client signs in to foldkit-agent's MCP server through the
// authorization server its 401 names, the way a deployed client does.
//
//   node tests/interop/mcp_oauth_client.mjs http://127.0.0.1:PORT/mcp CLIENT_ID CLIENT_SECRET
//
// The "browser" follows the authorization endpoint's redirect (the person is signed in and
// has consented) and hands the code back. Prints one JSON object describing what the client
// saw; tests/cli/test_serve_oauth.py checks it. The script only observes.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, clientId, clientSecret] = process.argv.slice(2);
const REDIRECT = "http://localhost:3/ts-callback";
const out = { asked: [], issued: [], answers: [] };
let code, verifier, tokens, discovery;

const provider = {
  get redirectUrl() {
    return REDIRECT;
  },
  get clientMetadata() {
    return {
      client_name: "foldkit-oauth-interop",
      redirect_uris: [REDIRECT],
      grant_types: ["authorization_code"],
      token_endpoint_auth_method: "client_secret_basic",
    };
  },
  clientInformation() {
    return { client_id: clientId, client_secret: clientSecret, token_endpoint_auth_method: "client_secret_basic" };
  },
  tokens() {
    return tokens;
  },
  saveTokens(issued) {
    tokens = issued;
    out.issued.push(issued.scope ?? "");
  },
  async redirectToAuthorization(authorizationUrl) {
    out.asked.push(authorizationUrl.searchParams.get("scope") ?? "");
    const answer = await fetch(authorizationUrl, { redirect: "manual" });
    code = new URL(answer.headers.get("location")).searchParams.get("code");
  },
  saveCodeVerifier(value) {
    verifier = value;
  },
  codeVerifier() {
    return verifier;
  },
  saveDiscoveryState(state) {
    discovery = state;
  },
  discoveryState() {
    return discovery;
  },
};

// What the MCP endpoint answered (status and challenge), request by request.
async function watched(input, init) {
  const answer = await fetch(input, init);
  if (String(input) === url) {
    out.answers.push({ status: answer.status, challenge: answer.headers.get("www-authenticate") });
  }
  return answer;
}

function transport() {
  return new StreamableHTTPClientTransport(new URL(url), { authProvider: provider, fetch: watched });
}

async function signedIn() {
  const first = transport();
  try {
    const client = new Client({ name: "foldkit-oauth-interop", version: "0.0.0" });
    await client.connect(first);
    return client;
  } catch (err) {
    if (!(err instanceof UnauthorizedError)) throw err;
    await first.finishAuth(code); // the person came back from the issuer with a code
  }
  const client = new Client({ name: "foldkit-oauth-interop", version: "0.0.0" });
  await client.connect(transport());
  return client;
}

let client;
try {
  client = await signedIn();
  out.cleared = await client.callTool({ name: "clear_selection", arguments: {} });
  const create = { name: "create_todo", arguments: { title: "Buy milk" } };
  try {
    out.created = await client.callTool(create);
  } catch (err) {
    if (!(err instanceof UnauthorizedError)) throw err;
    out.steppedUp = true; // the 403 named a scope; the issuer was asked again
    await client.transport.finishAuth(code);
    out.created = await client.callTool(create);
  }
} catch (err) {
  out.error = String(err && err.message ? err.message : err);
} finally {
  await client?.close().catch(() => {});
}
process.stdout.write(JSON.stringify(out) + "\n");
