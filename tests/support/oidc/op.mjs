// A real OpenID provider (npm oidc-provider) on a loopback port, for askgate's identity tests.
// Started by tests/support/oidc.rs with its configuration as JSON in OP_CONFIG:
//   { "clients": [{ "client_id", "client_secret", "claims"?: {...}, "redirect_uris"?: [...] }],
//     "resources": { "<resource URI>": { "scope": "a b", "alg"?: "RS256" | "ES256", "ttl"?: s } },
//     "accounts"?: { "<login>": { ...claims } } (also in the account's ID tokens), "jwks_max_age"?: seconds }
// It prints one JSON line `{"issuer": ...}` once it listens. Besides the provider's own routes
// (discovery, JWKS, token, authorization with the development login form) it serves:
//   POST /control/rotate  new signing keys (RS256 and ES256) sign from now on; the previous ones
//                         stay published (key rotation as IdPs do it), the ones before are dropped
//   POST /control/mint    {claims, header?, alg?}: a JWT signed with the current key of `alg`
//   GET  /control/pem?kid=K  the SPKI PEM of a published key (for key-confusion tokens)
//   GET  /control/stats   how many discovery and JWKS documents were served
// Rotation builds a new Provider over the same port and storage and swaps it in between two
// requests, so a rotation can happen in the middle of a load run.
import http from 'node:http';
import crypto from 'node:crypto';
import Provider from 'oidc-provider';
import { SignJWT, importJWK } from 'jose';

const config = JSON.parse(process.env.OP_CONFIG ?? '{}');
const stats = { discovery: 0, jwks: 0, rotations: 0 };

function newKey(alg) {
  const { privateKey } = alg === 'ES256'
    ? crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' })
    : crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), kid: crypto.randomUUID(), alg, use: 'sig' };
}

let current = [newKey('RS256'), newKey('ES256')];
let previous = [];

function clients() {
  // A client without a secret is public (PKCE alone, as a CLI such as Claude Code is).
  return (config.clients ?? []).map((client) => ({
    client_id: client.client_id,
    ...(client.client_secret
      ? { client_secret: client.client_secret }
      : { token_endpoint_auth_method: 'none' }),
    grant_types: client.redirect_uris ? ['authorization_code', 'refresh_token'] : ['client_credentials'],
    redirect_uris: client.redirect_uris ?? [],
    response_types: client.redirect_uris ? ['code'] : [],
  }));
}

function claimsFor(token) {
  const client = (config.clients ?? []).find((c) => c.client_id === token.clientId);
  const account = token.accountId ? config.accounts?.[token.accountId] : undefined;
  return { ...(client?.claims ?? {}), ...(account ?? {}) };
}

function build(issuer) {
  const provider = new Provider(issuer, {
    clients: clients(),
    jwks: { keys: [...current, ...previous] },
    cookies: { keys: ['askgate-test-op-cookie-key'] },
    // A signed-in account's claims (`accounts.<login>`) in its ID token, as IdPs configured
    // for a console put the person's email and groups there.
    findAccount: (_ctx, id) => ({
      accountId: id,
      claims: () => ({ ...(config.accounts?.[id] ?? {}), sub: id }),
    }),
    claims: { openid: ['sub', 'email', 'groups'] },
    conformIdTokenClaims: false,
    features: {
      devInteractions: { enabled: true },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: (_ctx, _client, oneOf) => oneOf,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => {
          const server = config.resources?.[resource];
          if (!server) throw new Provider.errors.InvalidTarget();
          return {
            audience: resource,
            scope: server.scope ?? '',
            accessTokenFormat: 'jwt',
            accessTokenTTL: server.ttl ?? 600,
            jwt: { sign: { alg: server.alg ?? 'RS256' } },
          };
        },
      },
    },
    formats: {
      customizers: {
        // The extra-claims hook: per-client (and per-account) claims such as `groups`, an
        // RFC 8693 `act` chain, or a user `sub` for a token an agent holds on a user's behalf.
        jwt: (_ctx, token, jwt) => { Object.assign(jwt.payload, claimsFor(token)); },
      },
    },
  });
  return provider.callback();
}

async function mint(body) {
  const alg = body.alg ?? 'RS256';
  const jwk = current.find((key) => key.alg === alg);
  const key = await importJWK(jwk, alg);
  return new SignJWT(body.claims ?? {})
    .setProtectedHeader({ alg, kid: jwk.kid, typ: 'at+jwt', ...(body.header ?? {}) })
    .sign(key);
}

function readBody(request) {
  return new Promise((resolve, reject) => {
    let text = '';
    request.on('data', (chunk) => { text += chunk; });
    request.on('end', () => { try { resolve(text ? JSON.parse(text) : {}); } catch (e) { reject(e); } });
    request.on('error', reject);
  });
}

function json(response, status, value) {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(value));
}

async function control(request, response, url, issuer) {
  if (url.pathname === '/control/rotate' && request.method === 'POST') {
    previous = current;
    current = [newKey('RS256'), newKey('ES256')];
    handler = build(issuer);
    stats.rotations += 1;
    return json(response, 200, { signing: current.map((k) => k.kid), published: [...current, ...previous].map((k) => k.kid) });
  }
  if (url.pathname === '/control/mint' && request.method === 'POST') {
    return json(response, 200, { token: await mint(await readBody(request)) });
  }
  if (url.pathname === '/control/pem' && request.method === 'GET') {
    const jwk = [...current, ...previous].find((key) => key.kid === url.searchParams.get('kid'));
    if (!jwk) return json(response, 404, { error: 'no such kid' });
    const { d, p, q, dp, dq, qi, ...publicJwk } = jwk;
    const pem = crypto.createPublicKey({ key: publicJwk, format: 'jwk' }).export({ type: 'spki', format: 'pem' });
    return json(response, 200, { pem });
  }
  if (url.pathname === '/control/stats' && request.method === 'GET') {
    return json(response, 200, stats);
  }
  return json(response, 404, { error: 'unknown control route' });
}

let handler;
const server = http.createServer((request, response) => {
  const url = new URL(request.url, 'http://127.0.0.1');
  const issuer = `http://127.0.0.1:${server.address().port}`;
  if (url.pathname.startsWith('/control/')) {
    control(request, response, url, issuer).catch((error) => json(response, 500, { error: String(error) }));
    return;
  }
  // RFC 8414's name for the same document (OAuth clients that are not OpenID clients ask it).
  if (url.pathname === '/.well-known/oauth-authorization-server') {
    request.url = '/.well-known/openid-configuration';
    url.pathname = '/.well-known/openid-configuration';
  }
  if (url.pathname === '/.well-known/openid-configuration') stats.discovery += 1;
  if (url.pathname === '/jwks') {
    stats.jwks += 1;
    if (config.jwks_max_age !== undefined) {
      const setHeader = response.setHeader.bind(response);
      response.setHeader = (name, value) => setHeader(name, name.toLowerCase() === 'cache-control' ? `max-age=${config.jwks_max_age}` : value);
      setHeader('cache-control', `max-age=${config.jwks_max_age}`);
    }
  }
  handler(request, response);
});

server.listen(config.port ?? 0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  handler = build(issuer);
  process.stdout.write(`${JSON.stringify({ issuer })}\n`);
});
// A harness that stopped reading must not crash the provider.
process.stdout.on('error', () => {});
// The test harness holds stdin open; when it goes away (the test ended or died), so does the OP.
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
