#!/usr/bin/env bash
# IdP callers against static tokens (issue 34 §1): the same distinct /v1/authorize reads
# (benches/http/distinct.lua CASE=read: a new project_id and session every request) with a
# static caller token and with JWT access tokens of a loopback issuer, on one `askgate serve`,
# in interleaved rounds, and their ratio (goal: JWT >= 90% of static).
#
#   bash benches/http/jwt.sh                      # ROUNDS=3 DURATION=8s CONNECTIONS=16 TOKENS=1000
#
# benches/http/issuer.py mints TOKENS RS256 tokens for distinct agents and serves discovery and
# JWKS (needs PyJWT and cryptography: pip install pyjwt cryptography). The JWT case presents
# every token in turn (distinct.lua TOKENS_FILE), as a fleet of agents would: the first request
# with each token verifies it (signature, claims, mapping), later ones find it in the verified-
# token cache (`server::auth::cache`); `cargo bench --bench verify` times a verification alone.
# Informational: it exits non-zero only when a case cannot run or an answer is not an allow.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-8s}
CONNECTIONS=${CONNECTIONS:-16}
THREADS=${THREADS:-2}
TOKENS=${TOKENS:-1000}
AUDIENCE=https://askgate.bench/mcp

for tool in wrk curl python3; do
  command -v "$tool" >/dev/null || { echo "jwt bench: $tool is required" >&2; exit 1; }
done
python3 -c "import jwt, cryptography" 2>/dev/null \
  || { echo "jwt bench: needs PyJWT and cryptography (pip install pyjwt cryptography)" >&2; exit 1; }
cargo build --release --quiet
BIN=${CARGO_TARGET_DIR:-target}/release/askgate
WORK=$(mktemp -d)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

ISSUER_PORT=$(port)
python3 benches/http/issuer.py "$ISSUER_PORT" "$AUDIENCE" "$WORK/tokens.txt" "$TOKENS" >"$WORK/issuer.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1200); do grep -q "^issuer" "$WORK/issuer.log" && break; sleep 0.1; done
grep -q "^issuer" "$WORK/issuer.log" || { cat "$WORK/issuer.log" >&2; exit 1; }

AGENT=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
APPROVER=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
cat >"$WORK/askgate.json" <<JSON
{"callers": [{"token": "$AGENT", "role": "agent", "principal": "bench-agent"},
             {"token": "$APPROVER", "role": "approver", "principal": "bench-approver"}],
 "identity": {"issuers": [{"issuer": "http://127.0.0.1:$ISSUER_PORT", "audience": "$AUDIENCE",
                           "agent_scopes": ["askgate:agent"]}]}}
JSON
PORT=$(port)
URL="http://127.0.0.1:$PORT"
"$BIN" serve --config "$WORK/askgate.json" --listen "127.0.0.1:$PORT" --watch-seconds 0 >"$WORK/serve.log" 2>&1 &
SERVE=$!
PIDS+=("$SERVE")
for _ in $(seq 100); do curl -sf -m 1 "$URL/healthz" >/dev/null && break; sleep 0.1; done
curl -sf -m 2 "$URL/healthz" >/dev/null || { cat "$WORK/serve.log" >&2; exit 1; }
curl -sf -m 5 -X POST "$URL/v1/design/consent" -H "Authorization: Bearer $APPROVER" >/dev/null

# One case: wrk with distinct.lua, every answer checked to be an allow.
run_case() { # name run-id [TOKENS_FILE]
  env CASE=read RUN="$2" TOKEN="$AGENT" TOKENS_FILE="${3:-}" CHECK='"decision":"allow"' \
    wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency -s benches/http/distinct.lua \
    "$URL/v1/authorize" >"$WORK/$1.out"
  python3 - "$1" "$WORK/$1.out" "$WORK/results.tsv" <<'PY'
import re, sys
name, path, results = sys.argv[1:]
text = open(path).read()
wrong = re.search(r"without the expected answer: (\d+)", text)
if not wrong or int(wrong.group(1)):
    sys.exit(f"{name}: answers that are not an allow\n{text}")
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
p99 = re.search(r"\s+99%\s+([\d.]+)(us|ms|s)\b", text)
print(f"| {name} | {rps:,.0f} | {p99.group(1)}{p99.group(2)} |")
open(results, "a").write(f"{name}\t{rps}\n")
PY
}

echo "wrk -t$THREADS -c$CONNECTIONS -d$DURATION, $ROUNDS round(s), $TOKENS JWT callers (RS256)"
echo
echo "| case | requests/s | p99 |"
echo "|---|---:|---:|"
for round in $(seq 1 "$ROUNDS"); do
  run_case static "s$round"
  run_case jwt "j$round" "$WORK/tokens.txt"
done
python3 - "$WORK/results.tsv" <<'PY'
import sys
from collections import defaultdict
rates = defaultdict(list)
for line in open(sys.argv[1]):
    name, rps = line.split("\t")
    rates[name].append(float(rps))
ratios = [j / s for s, j in zip(rates["static"], rates["jwt"])]
print()
print("jwt / static per round: " + ", ".join(f"{r:.0%}" for r in ratios)
      + f"; mean {sum(ratios) / len(ratios):.0%} (goal >= 90%)")
PY
