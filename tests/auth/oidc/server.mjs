// A real OAuth 2.1 authorization server for saga's tests: oidc-provider, a certified
// OpenID Provider, with resource indicators (RFC 8707), JWT access tokens (RFC 9068) for
// the resources the tests name, opaque tokens and introspection (RFC 7662), and the
// client-credentials grant.
//
//   node server.mjs PORT
//
// Prints `listening on http://127.0.0.1:PORT` once it serves. Each process signs with a
// key pair of its own, made at start: a second one is another issuer with other keys.
// SAGA_OIDC_FORMAT=opaque issues opaque tokens (introspected) instead of JWTs;
// SAGA_OIDC_TOKEN_TTL sets their lifetime in seconds. GET /test/jwks-hits says how many
// times its key set was fetched, GET /test/introspections how many tokens it was asked
// about. Every resource indicator
// is accepted. Clients: `saga-tests` and `saga-tests-2` / `secret` (scopes
// `tools:deploy tools:read tools:admin`; two subjects), and `saga-introspector` /
// `secret` (introspection only).
import fs from "node:fs";
import http from "node:http";
import { exportJWK, generateKeyPair } from "jose";
import Provider from "oidc-provider";

const port = Number(process.argv[2] ?? 0);
const issuer = `http://127.0.0.1:${port}`;
// SAGA_OIDC_KEY_FILE: the signing key is read from this file if it exists, else made and
// written there, so that a restart keeps its key (or, the file removed, rotates it).
const keyFile = process.env.SAGA_OIDC_KEY_FILE;
let signing;
if (keyFile && fs.existsSync(keyFile)) {
  signing = JSON.parse(fs.readFileSync(keyFile, "utf8"));
} else {
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  signing = { ...(await exportJWK(privateKey)), alg: "RS256", use: "sig", kid: `k-${port}-${Date.now()}` };
  if (keyFile) fs.writeFileSync(keyFile, JSON.stringify(signing));
}
const scopes = ["tools:deploy", "tools:read", "tools:admin"];
const ttl = Number(process.env.SAGA_OIDC_TOKEN_TTL ?? 300);

const provider = new Provider(issuer, {
  jwks: { keys: [signing] },
  clients: [
    {
      client_id: "saga-tests",
      client_secret: "secret",
      grant_types: ["client_credentials"],
      response_types: [],
      redirect_uris: [],
      scope: scopes.join(" "),
    },
    {
      client_id: "saga-tests-2",
      client_secret: "secret",
      grant_types: ["client_credentials"],
      response_types: [],
      redirect_uris: [],
      scope: scopes.join(" "),
    },
    {
      client_id: "saga-introspector",
      client_secret: "secret",
      grant_types: [],
      response_types: [],
      redirect_uris: [],
    },
  ],
  scopes,
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => undefined,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, resource) => {
        return {
          scope: scopes.join(" "),
          audience: resource,
          accessTokenTTL: ttl,
          accessTokenFormat: process.env.SAGA_OIDC_FORMAT === "opaque" ? "opaque" : "jwt",
          jwt: { sign: { alg: "RS256" } },
        };
      },
    },
  },
});
provider.proxy = false;

let jwksHits = 0;
let introspections = 0;
provider.use(async (ctx, next) => {
  if (ctx.path === "/jwks") jwksHits += 1;
  if (ctx.path === "/token/introspection") introspections += 1;
  await next();
});
const app = provider.callback();
const server = http.createServer((req, res) => {
  if (req.url === "/test/jwks-hits" || req.url === "/test/introspections") {
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ hits: req.url === "/test/jwks-hits" ? jwksHits : introspections }));
    return;
  }
  app(req, res);
});
server.listen(port, "127.0.0.1", () => {
  console.log(`listening on ${issuer}`);
});
