"""A loopback OpenID issuer for benches/http/jwt.sh: mints COUNT RS256 access tokens for
distinct agents (sub agent-<n>, scope askgate:agent, an hour to live) with the throwaway key of
benches/verify/test-keys.json into TOKENS, then serves its discovery document and key set on
PORT until stopped (as an IdP serves them; Cache-Control max-age=300).

    python3 benches/http/issuer.py PORT AUDIENCE TOKENS COUNT

Needs PyJWT and cryptography (pip install pyjwt cryptography)."""

import http.server
import json
import sys
import time

import jwt
from cryptography.hazmat.primitives.serialization import load_pem_private_key

port, audience, tokens_path, count = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
keys = json.load(open("benches/verify/test-keys.json"))
issuer = f"http://127.0.0.1:{port}"
now = int(time.time())
# Parsed once: PyJWT would parse the PEM again for every token.
private = load_pem_private_key(keys["private"]["bench-rs256"].encode(), password=None)
with open(tokens_path, "w") as out:
    for n in range(count):
        claims = {"iss": issuer, "sub": f"agent-{n}", "aud": audience, "iat": now,
                  "exp": now + 3600, "scope": "askgate:agent"}
        token = jwt.encode(claims, private, algorithm="RS256",
                           headers={"kid": "bench-rs256"})
        out.write(token + "\n")

documents = {
    "/.well-known/openid-configuration": {"issuer": issuer, "jwks_uri": f"{issuer}/jwks"},
    "/jwks": {"keys": keys["keys"]},
}


class Issuer(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        document = documents.get(self.path)
        body = json.dumps(document).encode()
        self.send_response(200 if document else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Cache-Control", "max-age=300")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


print(f"issuer {issuer}: {count} tokens in {tokens_path}", flush=True)
http.server.ThreadingHTTPServer(("127.0.0.1", port), Issuer).serve_forever()
