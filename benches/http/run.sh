#!/usr/bin/env bash
# The HTTP benchmark of `askgate serve` on loopback (issue 12 item 1, issue 10 §4), using wrk.
#
#   bash benches/http/run.sh                                  # the full run (~12 minutes)
#   DURATION=2s ROUNDS=1 MEMORY_CALLS=50000 bash benches/http/run.sh   # a quick look
#
# Settings (environment): DURATION (8s per case), ROUNDS (2), CONNECTIONS (16), THREADS (wrk
# threads, 2), PRECHECK (1s: each checked case's generator is run first at 2 connections and
# every answer checked), PLANS (256 plans of 20 paths, one per session, for plan20), MEMORY (1; 0 skips the memory
# phase), MEMORY_CALLS (1000000), PORT (18181; the next five ports are used too), LOGGED (1;
# 0 skips the logged cases), LOG_DIR (the logged serve's --log-dir; default a new directory
# under the run's mktemp -d, so on the disk of $TMPDIR), UPSTREAM_2MS (1; 0 skips the two
# one-connection cases against a 2 ms upstream), WITH_PEERS (1; 0 runs neither cedar-agent nor
# Cerbos: their ratios are reported MISSING), CASES (the names of the cases to run, separated
# by spaces or commas, e.g. CASES=floor,read,read-log,read-nosync; default every case: a ratio
# whose case was not run is reported MISSING).
#
# The logged cases (issue 24): a second `askgate serve --log-dir LOG_DIR` (fsync, group commit)
# with its own consent, grant and plans, measured beside the unlogged one in every round
# (*-log after its unlogged twin). After the rounds: the logged serve's log phases from
# /metrics (askgate_log_*: per batch and per record; the hash chain's share of the serve's CPU),
# the bytes per record by kind in LOG_DIR,
# and the physical limit of LOG_DIR's disk the same minute (benches/http/fsync.py: a write +
# fdatasync loop, one lane and several overlapping ones, as several writer threads do).
#
# The no-sync twins (*-nosync): a third `askgate serve --log-dir … --log-durability none`, so
# the logged path's CPU (encoding, queueing, writing, waking) is told apart from the disk's
# sync: read-log ≈ read-nosync means the sync is not what limits logged reads.
#
# The room twins (*-room): a fourth `askgate serve --log-dir …` (fsync) with `log_room_bytes`
# LOG_ROOM (1048576): the open file kept zero-filled past its last line, so a sync flushes data
# without growing the file (audit::writer::room).
#
# Starts `askgate serve` (release, embedded defaults: in-process sandbox), the HTTP floor
# (benches/http/floor.rs, a bare axum handler outside the production router: checks the
# bearer, parses the body with the service's extractor and request type, answers a constant),
# cedar-agent 0.2 with its shipped example, and the Cerbos PDP 0.55 with
# benches/http/cerbos/. Peers are installed on first use into benches/.peers/ (git-ignored).
# Then ROUNDS rounds, each running every case once in the same order (interleaved, so a
# change in the machine's load hits every case alike), then the memory phase on a fresh
# `serve`, then the ratios, per round and their mean, and a table for the README.
#
# Headline cases: a new body every request (benches/http/distinct.lua says what varies).
#   floor        the floor fed the read's distinct bodies
#   read         POST /v1/authorize get_project, new project_id and session per request
#   grant-write  POST /v1/authorize tokenless 1-file write_files under p1's durable grant
#   floor-plan   the floor fed plan20's distinct bodies (20 file objects)
#   plan20       POST /v1/authorize 20-file write_files covered by a plan
#   floor-hook   the floor's hook route fed the hook's distinct bodies
#   hook         POST /v1/hooks/claude-code, a write to a reserved segment (hook mode asks)
#   call, mcp    the same executed get_project over /v1/design/call and over /mcp (2026-07-28,
#                as Claude Code sends it; a new toolUseId per call): issue 19's MCP cost
#   cedar-agent  POST /v1/is_authorized, its shipped 3-policy example
#   cerbos       POST /api/check/resources, one resource policy
# Secondary: *-same (one body repeated: benches/http/post.lua), proxied (/v1/design/call,
# executed against the sandbox) and direct (the same tools/call straight to the sandbox), and
# *-c1 (one connection). wrk runs every case with the same THREADS and CONNECTIONS (one thread
# at one connection), so askgate, the floor and the peers get the same client; two threads,
# because one wrk thread running the body generator is what limits the floor, and a floor
# understated that way would flatter every ratio to it.
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/../.."
DURATION=${DURATION:-8s}
ROUNDS=${ROUNDS:-2}
CONNECTIONS=${CONNECTIONS:-16}
THREADS=${THREADS:-2}
PRECHECK=${PRECHECK:-1s}
PLANS=${PLANS:-256}
MEMORY=${MEMORY:-1}
MEMORY_CALLS=${MEMORY_CALLS:-1000000}
UPSTREAM_2MS=${UPSTREAM_2MS:-1}
PORT=${PORT:-18181}
FLOOR_PORT=$((PORT + 1))
CEDAR_PORT=$((PORT + 2))
CERBOS_PORT=$((PORT + 3))
CERBOS_GRPC_PORT=$((PORT + 4))
LOG_PORT=$((PORT + 5))
NOSYNC_PORT=$((PORT + 6))
ROOM_PORT=$((PORT + 7))
LOG_ROOM=${LOG_ROOM:-1048576}
CASES=${CASES:-}
LOGGED=${LOGGED:-1}
WITH_PEERS=${WITH_PEERS:-1}
LOG_DIR=${LOG_DIR:-}
PEERS=benches/.peers
CEDAR_BIN=$PEERS/cedar-agent/bin/cedar-agent
CERBOS_BIN=$PEERS/cerbos/node_modules/@cerbos/cerbos-linux-x64/cerbos-linux-x64
AGENT=askgate-demo-agent-token
APPROVER=askgate-demo-approver-token
SANDBOX_TOKEN=sandbox-access-token

command -v wrk >/dev/null || { echo "wrk is required (apt-get install wrk)"; exit 1; }
# One invocation, one feature set: built apart, the binary (no dev-dependencies) and the
# example would each need their own build of the dependencies.
cargo build --release --quiet --bin askgate --example http_floor
BIN=${CARGO_TARGET_DIR:-target}/release/askgate
WORK=$(mktemp -d)
PIDS=()
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
: > "$WORK/results.tsv"
LOG_DIR=${LOG_DIR:-$WORK/logs}
: > "$WORK/missing.txt"

wait_for() { # url what
  local _
  for _ in $(seq 100); do curl -s -o /dev/null "$1" && return 0; sleep 0.2; done
  echo "$2 did not come up at $1"
  return 1
}
loud() { printf '\n!!!!! %s\n\n' "$*" >&2; }
missing() { # peer reason
  loud "$1 IS MISSING: $2 — its ratio is missing from this run"
  echo "$1	$2" >> "$WORK/missing.txt"
}
json_get() { python3 -c "import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))" "$1"; }

# --- askgate -----------------------------------------------------------------------------

# API_PORT is the serve that api, approve, prepare_account and mint_plans talk to.
API_PORT=$PORT
start_serve() { # the unlogged serve on PORT
  $BIN serve --listen "127.0.0.1:$PORT" > "$WORK/serve.log" 2>&1 &
  SERVE=$!
  PIDS+=("$SERVE")
  wait_for "http://127.0.0.1:$PORT/healthz" "askgate serve"
  SANDBOX=$(grep -o 'sandbox at http://[0-9.:]*' "$WORK/serve.log" | tail -1 | sed 's/sandbox at //')
}
start_logged_serve() { # the same serve with --log-dir LOG_DIR on LOG_PORT
  $BIN serve --listen "127.0.0.1:$LOG_PORT" --log-dir "$LOG_DIR" > "$WORK/serve-log.log" 2>&1 &
  LOGGED_SERVE=$!
  PIDS+=("$LOGGED_SERVE")
  wait_for "http://127.0.0.1:$LOG_PORT/healthz" "askgate serve --log-dir"
}
start_nosync_serve() { # the logged serve without sync (--log-durability none) on NOSYNC_PORT
  $BIN serve --listen "127.0.0.1:$NOSYNC_PORT" --log-dir "$WORK/nosync-logs" --log-durability none \
    > "$WORK/serve-nosync.log" 2>&1 &
  PIDS+=("$!")
  wait_for "http://127.0.0.1:$NOSYNC_PORT/healthz" "askgate serve --log-durability none"
}
start_room_serve() { # the logged serve with log_room_bytes LOG_ROOM on ROOM_PORT
  echo "{\"log_room_bytes\": $LOG_ROOM}" > "$WORK/room.json"
  $BIN serve --listen "127.0.0.1:$ROOM_PORT" --log-dir "$WORK/room-logs" --config "$WORK/room.json" \
    > "$WORK/serve-room.log" 2>&1 &
  ROOM_SERVE=$!
  PIDS+=("$ROOM_SERVE")
  wait_for "http://127.0.0.1:$ROOM_PORT/healthz" "askgate serve with log_room_bytes"
}
api() { # token path [body]
  curl -s -X POST "localhost:$API_PORT$2" -H "Authorization: Bearer $1" ${3:+-d "$3"}
}
approve() { # the reply of a call that asked; prints the ended approval
  local id reply
  id=$(json_get 'd["approval"]["id"]' <<< "$1") || { echo "the call did not ask: $1" >&2; exit 1; }
  reply=$(api "$APPROVER" "/v1/approvals/$id/approve")
  if [ "$(json_get 'd["status"]' <<< "$reply")" = running ]; then
    reply=$(curl -s "localhost:$API_PORT/v1/approvals/$id?wait=20s" -H "Authorization: Bearer $APPROVER")
  fi
  [ "$(json_get 'd["status"]' <<< "$reply")" = completed ] || { echo "approving $id did not complete: $reply" >&2; exit 1; }
  echo "$reply"
}
session_json() { echo "\"session\":{\"id\":\"$1\",\"agent\":\"main\",\"mode\":\"default\",\"interactive\":true}"; }

# Consent, and p1's durable grant through the real API: a tokenless write asks for the grant,
# the approver approves it, askgate POSTs the grant upstream and runs the write.
prepare_account() {
  api "$APPROVER" /v1/design/consent > /dev/null
  local asked
  asked=$(api "$AGENT" /v1/design/call "{$(session_json bench-grant),\"input\":{\"operation\":\"write_files\",\"arguments\":{\"project_id\":\"p1\",\"files\":[{\"path\":\"site/grant.html\",\"data\":\"x\"}]}}}")
  [ "$(json_get 'd["approval"]["card"]["kind"]' <<< "$asked" 2>/dev/null)" = grant ] \
    || { echo "a tokenless write did not ask for a grant: $asked"; exit 1; }
  approve "$asked" > /dev/null
}

# PLANS plans of 20 paths each (a plan holds at most 20 paths, and a session one plan per
# project), plan k for p1 in session bench-plan-<k> with paths site/p<kkk>/<ii>.html, each
# through a real finalize_plan approval (8 at a time); prints the plan tokens, comma-separated.
mint_plans() {
  python3 - "$API_PORT" "$AGENT" "$APPROVER" "$PLANS" <<'PY'
import json, sys, urllib.request
from concurrent.futures import ThreadPoolExecutor
port, agent, approver, plans = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def post(token, path, body=None):
    data = json.dumps(body).encode() if body is not None else b""
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method="POST",
                                     headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return json.load(reply)
    except urllib.error.HTTPError as error:
        return json.load(error)
def mint(k):
    session = {"id": f"bench-plan-{k}", "agent": "main", "mode": "default", "interactive": True}
    writes = ["site/p%03d/%02d.html" % (k, i) for i in range(20)]
    asked = post(agent, "/v1/design/call", {"session": session, "input": {
        "operation": "finalize_plan",
        "arguments": {"project_id": "p1", "writes": writes, "scope": "paths"}}})
    approval = asked.get("approval") or sys.exit(f"finalize_plan {k} did not ask: {asked}")
    done = post(approver, f"/v1/approvals/{approval['id']}/approve")
    if done.get("status") != "completed":
        sys.exit(f"approving plan {k} did not complete: {done}")
    return json.loads(done["result"]["content"][0]["text"])["plan_token"]
with ThreadPoolExecutor(8) as pool:
    print(",".join(pool.map(mint, range(plans))))
PY
}

start_serve
prepare_account
PLAN_TOKENS=$(mint_plans)
TOKEN_PLAN=${PLAN_TOKENS%%,*}
LOG_PLAN_TOKENS=
if [ "$LOGGED" = 1 ]; then
  start_logged_serve
  API_PORT=$LOG_PORT
  prepare_account
  LOG_PLAN_TOKENS=$(mint_plans)
  start_nosync_serve
  API_PORT=$NOSYNC_PORT
  prepare_account
  start_room_serve
  API_PORT=$ROOM_PORT
  prepare_account
  API_PORT=$PORT
fi
"${CARGO_TARGET_DIR:-target}/release/examples/http_floor" "127.0.0.1:$FLOOR_PORT" > "$WORK/floor.log" 2>&1 &
PIDS+=("$!")
wait_for "http://127.0.0.1:$FLOOR_PORT/" "the HTTP floor"

# The same-body cases' bodies and the proxied / direct pair's.
python3 - "$WORK" "$TOKEN_PLAN" <<'PY'
import json, sys
work, token = sys.argv[1:]
def session(sid):
    return {"id": sid, "agent": "main", "mode": "default", "interactive": True}
def authorize(sid, operation, arguments):
    return {"session": session(sid), "tool": "ClaudeDesign",
            "input": {"operation": operation, "arguments": arguments}}
bodies = {
    "read": authorize("bench", "get_project", {"project_id": "p1"}),
    "grant": authorize("bench", "write_files", {"project_id": "p1",
        "files": [{"path": "site/same.html", "data": "<p>x</p>"}]}),
    "plan": authorize("bench-plan-0", "write_files", {"project_id": "p1", "plan_token": token,
        "files": [{"path": "site/p000/%02d.html" % i, "data": "x"} for i in range(20)]}),
    "call": {"session": session("bench"),
             "input": {"operation": "get_project", "arguments": {"project_id": "p1"}}},
    "mcp": {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "get_project", "arguments": {"project_id": "p1"}}},
}
for name, body in bodies.items():
    with open(f"{work}/{name}.json", "w") as f:
        json.dump(body, f, separators=(",", ":"))
PY
MCP_SESSION=$(curl -s -D - -o /dev/null -X POST "$SANDBOX/v1/design/mcp" -H "Authorization: Bearer $SANDBOX_TOKEN" \
  -d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}' \
  | grep -i '^mcp-session-id' | awk '{print $2}' | tr -d '\r')

# --- peers -------------------------------------------------------------------------------

CEDAR_OK=0
CERBOS_OK=0
start_cedar() {
  if [ ! -x "$CEDAR_BIN" ]; then
    echo "installing cedar-agent 0.2 into $PEERS/cedar-agent (cargo install --locked; several minutes)"
    if ! cargo install cedar-agent --locked --version '^0.2' --root "$PEERS/cedar-agent" > "$WORK/cedar-install.log" 2>&1; then
      tail -n 20 "$WORK/cedar-install.log" >&2
      missing cedar-agent "cargo install cedar-agent failed"
      return 0
    fi
  fi
  local examples
  examples=$(find "${CARGO_HOME:-$HOME/.cargo}/registry/src" -maxdepth 3 -type d -path '*/cedar-agent-0.2.*/examples' 2>/dev/null | sort -V | tail -1)
  if [ -z "$examples" ]; then
    missing cedar-agent "its shipped examples (cedar-agent-0.2.*/examples in the cargo registry) are not on this machine"
    return 0
  fi
  # The same bearer check as askgate's (cedar-agent compares the whole Authorization header).
  ROCKET_LOG_LEVEL=critical "$CEDAR_BIN" --addr 127.0.0.1 --port "$CEDAR_PORT" --authentication "Bearer $AGENT" --log-level error \
    > "$WORK/cedar.log" 2>&1 &
  PIDS+=("$!")
  if ! wait_for "http://127.0.0.1:$CEDAR_PORT/" cedar-agent; then
    missing cedar-agent "it did not start: $(tail -n 3 "$WORK/cedar.log")"
    return 0
  fi
  local what
  for what in schema policies data; do
    curl -sf -X PUT "localhost:$CEDAR_PORT/v1/$what" -H "Authorization: Bearer $AGENT" \
      -H 'Content-Type: application/json' -d @"$examples/$what.json" > /dev/null \
      || { missing cedar-agent "loading its example $what failed"; return 0; }
  done
  local allowed denied
  allowed=$(curl -s -X POST "localhost:$CEDAR_PORT/v1/is_authorized" -H "Authorization: Bearer $AGENT" \
    -H 'Content-Type: application/json' -d @"$examples/allowed_authorization_query.json")
  denied=$(curl -s -X POST "localhost:$CEDAR_PORT/v1/is_authorized" -H "Authorization: Bearer $AGENT" \
    -H 'Content-Type: application/json' -d @"$examples/denied_authorization_query.json")
  if [ "$(json_get 'd["decision"]' <<< "$allowed")" != Allow ] || [ "$(json_get 'd["decision"]' <<< "$denied")" != Deny ]; then
    missing cedar-agent "its example queries did not answer Allow / Deny: $allowed / $denied"
    return 0
  fi
  echo "cedar-agent ($("$CEDAR_BIN" --version 2>/dev/null || echo 0.2)): example allowed query → Allow, denied query → Deny"
  CEDAR_OK=1
}
start_cerbos() {
  if [ ! -x "$CERBOS_BIN" ]; then
    echo "installing the Cerbos PDP 0.55 into $PEERS/cerbos (npm @cerbos/cerbos-linux-x64@0.55.0)"
    if ! npm install --prefix "$PEERS/cerbos" @cerbos/cerbos-linux-x64@0.55.0 > "$WORK/cerbos-install.log" 2>&1 || [ ! -x "$CERBOS_BIN" ]; then
      tail -n 20 "$WORK/cerbos-install.log" >&2
      missing cerbos "npm install @cerbos/cerbos-linux-x64@0.55.0 failed"
      return 0
    fi
  fi
  # --log-level=warn: Cerbos logs every request at info; askgate (without --log-dir) logs none.
  "$CERBOS_BIN" server --config=benches/http/cerbos/config.yaml --log-level=warn \
    --set="server.httpListenAddr=127.0.0.1:$CERBOS_PORT" --set="server.grpcListenAddr=127.0.0.1:$CERBOS_GRPC_PORT" \
    > "$WORK/cerbos.log" 2>&1 &
  PIDS+=("$!")
  if ! wait_for "http://127.0.0.1:$CERBOS_PORT/_cerbos/health" cerbos; then
    missing cerbos "it did not start: $(tail -n 3 "$WORK/cerbos.log")"
    return 0
  fi
  local answer
  answer=$(curl -s -X POST "localhost:$CERBOS_PORT/api/check/resources" -H 'Content-Type: application/json' \
    -d '{"requestId":"c","principal":{"id":"a","roles":["agent"]},"resources":[{"actions":["read","write"],"resource":{"kind":"design_file","id":"f","attr":{"granted":false}}}]}')
  if [ "$(json_get 'd["results"][0]["actions"]["read"] + " " + d["results"][0]["actions"]["write"]' <<< "$answer")" != "EFFECT_ALLOW EFFECT_DENY" ]; then
    missing cerbos "its check did not answer read allow / write deny without a grant: $answer"
    return 0
  fi
  echo "cerbos ($("$CERBOS_BIN" --version 2>/dev/null | head -n 1)): read → EFFECT_ALLOW, write without grant → EFFECT_DENY"
  CERBOS_OK=1
}
if [ "$WITH_PEERS" = 1 ]; then
  start_cedar
  start_cerbos
else
  missing cedar-agent "not run (WITH_PEERS=0)"
  missing cerbos "not run (WITH_PEERS=0)"
fi

# --- the cases ---------------------------------------------------------------------------

declare -A URL KIND TOKEN CONNS EXPECT PLANS_FOR
ORDER=()
define() { # name url kind token connections expect (skipped when CASES does not name it)
  if [ -n "$CASES" ] && ! grep -qx -- "$1" <<< "${CASES//[, ]/$'\n'}"; then return 0; fi
  URL[$1]=$2 KIND[$1]=$3 TOKEN[$1]=$4 CONNS[$1]=$5 EXPECT[$1]=$6
  ORDER+=("$1")
}
A="http://127.0.0.1:$PORT"
L="http://127.0.0.1:$LOG_PORT"
N="http://127.0.0.1:$NOSYNC_PORT"
R="http://127.0.0.1:$ROOM_PORT"
F="http://127.0.0.1:$FLOOR_PORT/_bench/floor"
ALLOW='"decision":"allow"'
ASK='"permissionDecision":"ask"'
C=$CONNECTIONS
logged() { # name url kind token connections expect: a logged twin, when LOGGED=1
  if [ "$LOGGED" = 1 ]; then define "$@"; fi
}
define floor        "$F"                 read   $AGENT "$C" "$ALLOW"
define read         "$A/v1/authorize"    read   $AGENT "$C" "$ALLOW"
logged read-log     "$L/v1/authorize"    read   $AGENT "$C" "$ALLOW"
logged read-nosync  "$N/v1/authorize"    read   $AGENT "$C" "$ALLOW"
logged read-room    "$R/v1/authorize"    read   $AGENT "$C" "$ALLOW"
define grant-write  "$A/v1/authorize"    grant  $AGENT "$C" "$ALLOW"
logged grant-write-log "$L/v1/authorize" grant  $AGENT "$C" "$ALLOW"
logged grant-write-room "$R/v1/authorize" grant $AGENT "$C" "$ALLOW"
define floor-plan   "$F"                 plan20 $AGENT "$C" "$ALLOW"
define plan20       "$A/v1/authorize"    plan20 $AGENT "$C" "$ALLOW"
logged plan20-log   "$L/v1/authorize"    plan20 $AGENT "$C" "$ALLOW"
PLANS_FOR[plan20-log]=$LOG_PLAN_TOKENS
define floor-hook   "$F/hook"            hook   $AGENT "$C" "$ASK"
define hook         "$A/v1/hooks/claude-code" hook $AGENT "$C" "$ASK"
logged hook-log     "$L/v1/hooks/claude-code" hook $AGENT "$C" "$ASK"
logged hook-nosync  "$N/v1/hooks/claude-code" hook $AGENT "$C" "$ASK"
logged hook-room    "$R/v1/hooks/claude-code" hook $AGENT "$C" "$ASK"
if [ $CEDAR_OK = 1 ]; then
  define cedar-agent "http://127.0.0.1:$CEDAR_PORT/v1/is_authorized" cedar $AGENT "$C" '"decision":"'
fi
if [ $CERBOS_OK = 1 ]; then
  define cerbos "http://127.0.0.1:$CERBOS_PORT/api/check/resources" cerbos "" "$C" '"read":"EFFECT_ALLOW"'
fi
define floor-same       "$F"                    same:read.json  $AGENT "$C" ""
define read-same        "$A/v1/authorize"       same:read.json  $AGENT "$C" ""
define grant-write-same "$A/v1/authorize"       same:grant.json $AGENT "$C" ""
define floor-plan-same  "$F"                    same:plan.json  $AGENT "$C" ""
define plan20-same      "$A/v1/authorize"       same:plan.json  $AGENT "$C" ""
define proxied          "$A/v1/design/call"     same:call.json  $AGENT "$C" ""
logged proxied-log      "$L/v1/design/call"     same:call.json  $AGENT "$C" ""
logged proxied-nosync   "$N/v1/design/call"     same:call.json  $AGENT "$C" ""
logged proxied-room     "$R/v1/design/call"     same:call.json  $AGENT "$C" ""
define direct           "$SANDBOX/v1/design/mcp" same:mcp.json  $SANDBOX_TOKEN "$C" ""
define call             "$A/v1/design/call"     call            $AGENT "$C" '"result"'
define mcp              "$A/mcp"                mcp             $AGENT "$C" 'Q3 deck'
define mcp-service      "$A/mcp"                mcp-service     $AGENT "$C" 'Q3 deck'
define floor-c1         "$F"                    read            $AGENT 1 ""
define read-c1          "$A/v1/authorize"       read            $AGENT 1 ""
define proxied-c1       "$A/v1/design/call"     same:call.json  $AGENT 1 ""
logged proxied-c1-log   "$L/v1/design/call"     same:call.json  $AGENT 1 ""
define direct-c1        "$SANDBOX/v1/design/mcp" same:mcp.json  $SANDBOX_TOKEN 1 ""

RUN_SEQ=0
wrk_case() { # name duration connections [extra env...] — prints wrk's output
  local name=$1 duration=$2 conns=$3 threads=$THREADS
  shift 3
  if [ "$conns" -lt "$threads" ]; then threads=$conns; fi
  RUN_SEQ=$((RUN_SEQ + 1))
  local kind=${KIND[$name]} header_name="" header_value=""
  if [ "${URL[$name]#"$SANDBOX"}" != "${URL[$name]}" ]; then
    header_name=Mcp-Session-Id header_value=$MCP_SESSION
  fi
  if [ "${kind#same:}" != "$kind" ]; then
    env BODY_FILE="$WORK/${kind#same:}" TOKEN="${TOKEN[$name]}" HEADER_NAME="$header_name" \
      HEADER_VALUE="$header_value" "$@" \
      wrk -t"$threads" -c"$conns" -d"$duration" --latency -s benches/http/post.lua "${URL[$name]}"
  else
    env CASE="$kind" RUN="$RUN_SEQ" TOKEN="${TOKEN[$name]}" PLAN_TOKENS="${PLANS_FOR[$name]:-$PLAN_TOKENS}" "$@" \
      wrk -t"$threads" -c"$conns" -d"$duration" --latency -s benches/http/distinct.lua "${URL[$name]}"
  fi
}

# A distinct case's own generator at 2 connections for PRECHECK, every answer checked; a
# same-body case's body once with curl. Stops the benchmark on any unexpected answer.
precheck() { # name
  local name=$1 out
  if [ -n "${EXPECT[$name]}" ]; then
    out=$(wrk_case "$name" "$PRECHECK" 2 CHECK="${EXPECT[$name]}")
    if ! grep -q 'without the expected answer: 0$' <<< "$out" || grep -q 'answers checked: 0,' <<< "$out"; then
      echo "precheck of $name failed (expected every answer to hold ${EXPECT[$name]}):"
      grep -A1 'answers checked' <<< "$out"
      exit 1
    fi
  elif [ "${KIND[$name]#same:}" != "${KIND[$name]}" ] && { [ "${URL[$name]#"$A"}" != "${URL[$name]}" ] || [ "${URL[$name]#"$L"}" != "${URL[$name]}" ] || [ "${URL[$name]#"$N"}" != "${URL[$name]}" ]; }; then
    out=$(curl -s -X POST "${URL[$name]}" -H "Authorization: Bearer ${TOKEN[$name]}" -d @"$WORK/${KIND[$name]#same:}")
    case $name in
      proxied*) grep -q '"result"' <<< "$out" || { echo "precheck of $name failed: $out"; exit 1; } ;;
      *) grep -qF "$ALLOW" <<< "$out" || { echo "precheck of $name failed: $out"; exit 1; } ;;
    esac
  fi
}

measure() { # round name
  local round=$1 name=$2
  wrk_case "$name" "$DURATION" "${CONNS[$name]}" > "$WORK/$name.r$round.out"
  python3 - "$round" "$name" "$WORK/$name.r$round.out" "$WORK/results.tsv" <<'PY'
import re, sys
round_, name, path, results = sys.argv[1:]
text = open(path).read()
def ms(v, unit):
    return float(v) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
p = {k: ms(v, u) for k, v, u in re.findall(r"\s+(50|99)%\s+([\d.]+)(us|ms|s)\b", text)}
non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
non2xx = int(non2xx.group(1)) if non2xx else 0
errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
errors = sum(map(int, errors.groups())) if errors else 0
flag = "  <-- non-2xx or socket errors" if non2xx or errors else ""
print(f"| {round_} | {name} | {rps:,.0f} | {p['50']:.3f} | {p['99']:.3f} | {non2xx} | {errors} |{flag}")
with open(results, "a") as out:
    out.write(f"{round_}\t{name}\t{rps}\t{p['50']}\t{p['99']}\t{non2xx}\t{errors}\n")
PY
}

echo
echo "wrk -t$THREADS -c$CONNECTIONS -d$DURATION per case (one connection: -t1 -c1), $ROUNDS round(s)"
for round in $(seq 1 "$ROUNDS"); do
  for name in "${ORDER[@]}"; do precheck "$name"; done
  echo
  echo "| round | case | requests/s | p50 ms | p99 ms | non-2xx | socket errors |"
  echo "|---|---|---:|---:|---:|---:|---:|"
  for name in "${ORDER[@]}"; do measure "$round" "$name"; done
done
RSS_AFTER_ROUNDS=$(awk '/^VmRSS/ {print $2}' "/proc/$SERVE/status")
echo
echo "askgate VmRSS after the rounds: $((RSS_AFTER_ROUNDS / 1024)) MiB"

# --- the logged serve: its log phases, bytes per record, the disk's physical limit ---------

if [ "$LOGGED" = 1 ]; then
  curl -s "localhost:$LOG_PORT/metrics" > "$WORK/log-metrics.txt"
  # The logged serve's CPU over its whole life (user + system), for the chain's share of it.
  LOGGED_CPU=$(awk -v tck="$(getconf CLK_TCK)" '{print ($14 + $15) / tck}' "/proc/$LOGGED_SERVE/stat")
  kill "$LOGGED_SERVE"
  wait "$LOGGED_SERVE" 2>/dev/null || true
  LINE_BYTES=$(python3 - "$LOG_DIR" "$WORK/log-metrics.txt" "$LOGGED_CPU" <<'PY'
import glob, json, os, re, sys
from collections import defaultdict
log_dir, metrics, cpu = sys.argv[1:]
cpu = float(cpu)
sizes = defaultdict(list)
for path in sorted(glob.glob(os.path.join(log_dir, "decisions-*.jsonl"))):
    with open(path, "rb") as f:
        # The lines end at the writer's zero-filled room, as askgate's reader reads them.
        for line in f.read().split(b"\0", 1)[0].splitlines(keepends=True):
            record = json.loads(line)
            kind = record["kind"]
            if kind == "decision":
                kind = f"decision {record['tool']} {record['operation']} {record['decision']}"
            sizes[kind].append(len(line))
out = sys.stderr
print(f"\nbytes per record in {log_dir} (newline included):\n", file=out)
print("| record | count | mean bytes | max bytes |", file=out)
print("|---|---:|---:|---:|", file=out)
for kind, values in sorted(sizes.items(), key=lambda kv: -len(kv[1])):
    print(f"| {kind} | {len(values):,} | {sum(values) / len(values):,.0f} | {max(values):,} |", file=out)
text = open(metrics).read()
value = lambda name: float(re.search(rf"^{name} (\S+)$", text, re.M).group(1))
seconds = {m[0]: float(m[1]) for m in re.findall(r'^askgate_log_seconds_total\{phase="(\w+)"\} (\S+)$', text, re.M)}
batches, lines = value("askgate_log_batches_total"), value("askgate_log_lines_total")
print(f"\nthe logged serve's writer over the run (/metrics): {lines:,.0f} lines in {batches:,.0f} group "
      f"commits ({lines / max(batches, 1):.1f} lines per commit), {value('askgate_log_bytes_total') / max(lines, 1):,.0f} bytes per line\n", file=out)
print("| phase | ms per commit | µs per line |", file=out)
print("|---|---:|---:|", file=out)
for phase in ("wait", "write", "sync", "wake"):
    total = seconds.get(phase, 0.0)
    print(f"| {phase} | {total / max(batches, 1) * 1e3:.3f} | {total / max(lines, 1) * 1e6:.1f} |", file=out)
chain = value("askgate_log_chain_seconds_total")
print(f"\nthe hash chain and its checkpoints (issue 37; part of the write phase): {chain / max(lines, 1) * 1e6:.2f} µs per line, "
      f"{chain:.3f} s in all = {chain / max(cpu, 1e-9) * 100:.2f}% of the logged serve's CPU over the run ({cpu:.1f} s), "
      f"the most the chain can take from its logged throughput when CPU bounds it", file=out)
buckets = {m[0]: float(m[1]) for m in re.findall(r'^askgate_log_commit_seconds_bucket\{le="([^"]+)"\} (\S+)$', text, re.M)}
slow = buckets.get("+Inf", 0.0) - buckets.get("0.005", 0.0)
within = next((le for le, n in buckets.items() if n >= buckets.get("+Inf", 0.0)), "+Inf")
print(f"\ngroup commits over 5 ms (first line to waiters woken): {slow:,.0f} of {buckets.get('+Inf', 0.0):,.0f};"
      f" every one within {within} s", file=out)
decisions = [v for k, vs in sizes.items() if k.startswith("decision") for v in vs]
print(round(sum(decisions) / len(decisions)) if decisions else 1700)
PY
)
  curl -s "localhost:$ROOM_PORT/metrics" | python3 -c '
import re, sys
text = sys.stdin.read()
value = lambda name: float(re.search(rf"^{name} (\S+)$", text, re.M).group(1))
seconds = {m[0]: float(m[1]) for m in re.findall(r"^askgate_log_seconds_total\{phase=\"(\w+)\"\} (\S+)$", text, re.M)}
batches, lines = value("askgate_log_batches_total"), value("askgate_log_lines_total")
print(f"\nthe room serve (log_room_bytes '"$LOG_ROOM"'): {lines:,.0f} lines in {batches:,.0f} group commits ({lines / max(batches, 1):.1f} lines per commit)\n")
print("| phase | ms per commit | µs per line |")
print("|---|---:|---:|")
for phase in ("wait", "write", "sync", "wake"):
    total = seconds.get(phase, 0.0)
    print(f"| {phase} | {total / max(batches, 1) * 1e3:.3f} | {total / max(lines, 1) * 1e6:.1f} |")
buckets = {m[0]: float(m[1]) for m in re.findall(r"^askgate_log_commit_seconds_bucket\{le=\"([^\"]+)\"\} (\S+)$", text, re.M)}
total = buckets.get("+Inf", 0.0)
slow = total - buckets.get("0.005", 0.0)
print(f"\ngroup commits over 5 ms: {slow:,.0f} of {total:,.0f}")
' >&2
  python3 benches/http/fsync.py "$LOG_DIR" 3 "$LINE_BYTES" 1,16 1,2,3,4
fi

# The 2 ms upstream pair (issue 3's 1.2× target), once after the rounds: the sandbox's delay
# fault stays on for the rest of the process.
if [ "$UPSTREAM_2MS" = 1 ]; then
  curl -sf -X POST "$SANDBOX/_sandbox/faults" -H 'content-type: application/json' \
    -d '{"fault":"delay","ms":2,"count":4000000000,"tool":"get_project"}' > /dev/null
  define proxied-c1-upstream-2ms "$A/v1/design/call"      same:call.json $AGENT 1 ""
  define direct-c1-upstream-2ms  "$SANDBOX/v1/design/mcp" same:mcp.json  $SANDBOX_TOKEN 1 ""
  echo
  echo "| round | case | requests/s | p50 ms | p99 ms | non-2xx | socket errors |"
  echo "|---|---|---:|---:|---:|---:|---:|"
  measure 1 proxied-c1-upstream-2ms
  measure 1 direct-c1-upstream-2ms
fi

# --- memory: MEMORY_CALLS distinct calls (reads and grant-writes alternately) ------------

decisions() {
  curl -s "localhost:$PORT/metrics" | awk '/^askgate_decisions_total/ {s += $NF} END {printf "%d\n", s}'
}
rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$SERVE/status"; }
# One half: each wrk thread stops itself after its share of answers, but wrk's main thread
# sleeps out -d regardless, so once askgate's decision count stops moving (every thread has
# stopped) wrk is interrupted (SIGINT: it prints its summary and exits). Deadline: 1 hour.
memory_half() { # half number
  local wrk_pid before now _
  RUN_SEQ=$((RUN_SEQ + 1))
  # env execs wrk, so $! is wrk's own pid.
  env CASE=mixed RUN="$RUN_SEQ" TOKEN="$AGENT" STOP_AFTER="$per_thread" \
    wrk -t"$THREADS" -c"$CONNECTIONS" -d3600s --latency -s benches/http/distinct.lua \
    "$A/v1/authorize" > "$WORK/memory.$1.out" &
  wrk_pid=$!
  before=-1
  for _ in $(seq 3600); do
    sleep 1
    now=$(decisions)
    if [ "$now" = "$before" ]; then break; fi
    before=$now
  done
  kill -INT "$wrk_pid" 2>/dev/null || true
  wait "$wrk_pid" || true
}
if [ "$MEMORY" = 1 ]; then
  kill "$SERVE"
  wait "$SERVE" 2>/dev/null || true
  start_serve
  prepare_account
  define memory "$A/v1/authorize" mixed $AGENT "$C" "$ALLOW"
  precheck memory
  half=$((MEMORY_CALLS / 2))
  per_thread=$(((half + THREADS - 1) / THREADS))
  d0=$(decisions); r0=$(rss_kib)
  memory_half 1
  d1=$(decisions); r1=$(rss_kib)
  memory_half 2
  d2=$(decisions); r2=$(rss_kib)
  echo
  echo "memory phase on a fresh serve (consent and p1's grant recorded, then a ${PRECHECK} check;"
  echo "reads and grant-writes alternately, every body new; calls counted by askgate_decisions_total):"
  echo
  echo "| point | calls decided | VmRSS MiB |"
  echo "|---|---:|---:|"
  echo "| before | 0 | $(python3 -c "print(f'{$r0/1024:.1f}')") |"
  echo "| after the first half | $((d1 - d0)) | $(python3 -c "print(f'{$r1/1024:.1f}')") |"
  echo "| after the second half | $((d2 - d0)) | $(python3 -c "print(f'{$r2/1024:.1f}')") |"
  echo
  echo "growth: first half +$(python3 -c "print(f'{($r1-$r0)/1024:.1f}')") MiB, second half +$(python3 -c "print(f'{($r2-$r1)/1024:.1f}')") MiB"
  printf 'memory\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r0" "$r1" "$r2" "$((d1 - d0))" "$((d2 - d0))" "$RSS_AFTER_ROUNDS" > "$WORK/memory.tsv"
fi

# --- ratios ------------------------------------------------------------------------------

python3 - "$WORK/results.tsv" "$WORK/missing.txt" "$WORK/memory.tsv" <<'PY'
import os, sys
results, missing_path, memory_path = sys.argv[1:]
rows = {}
for line in open(results):
    r, name, rps, p50, p99, non2xx, errors = line.rstrip("\n").split("\t")
    rows.setdefault(name, {})[int(r)] = (float(rps), float(p50), float(p99), int(non2xx), int(errors))
missing = dict(line.rstrip("\n").split("\t", 1) for line in open(missing_path) if line.strip())
rounds = sorted({r for name, by_round in rows.items() if "upstream" not in name for r in by_round})
mean = lambda xs: sum(xs) / len(xs)

ratios = [
    ("read / floor", "read", "floor", "≥ 50%", 0.50),
    ("read / cedar-agent", "read", "cedar-agent", "≥ 2×", 2.0),
    ("read / cerbos", "read", "cerbos", "", 0.0),
    ("grant-write / floor", "grant-write", "floor", "≥ 35%", 0.35),
    ("plan20 / floor-plan", "plan20", "floor-plan", "≥ 20%", 0.20),
    ("hook / floor-hook", "hook", "floor-hook", "≥ 60%", 0.60),
    ("read-log / read (issue 24)", "read-log", "read", "≥ 80%", 0.80),
    ("read-log / floor (issue 24)", "read-log", "floor", "≥ 40%", 0.40),
    ("proxied-log / proxied (issue 24)", "proxied-log", "proxied", "≥ 90%", 0.90),
    ("mcp / call (issue 19)", "mcp", "call", "≥ 80%", 0.80),
    ("mcp-service / call (2026-07-28 on rmcp's service)", "mcp-service", "call", "", None),
    ("read-room / read (issue 24, log_room_bytes)", "read-room", "read", "≥ 80%", 0.80),
    ("read-room / floor (issue 24, log_room_bytes)", "read-room", "floor", "≥ 40%", 0.40),
    ("proxied-room / proxied (issue 24, log_room_bytes)", "proxied-room", "proxied", "≥ 90%", 0.90),
    ("read-room / read-log (what the room gains)", "read-room", "read-log", "", None),
    ("grant-write-room / grant-write", "grant-write-room", "grant-write", "", None),
    ("hook-room / hook", "hook-room", "hook", "", None),
    ("read-nosync / read (the log without sync)", "read-nosync", "read", "", None),
    ("read-log / read-nosync (what the sync costs)", "read-log", "read-nosync", "", None),
    ("proxied-nosync / proxied", "proxied-nosync", "proxied", "", None),
    ("hook-nosync / hook", "hook-nosync", "hook", "", None),
    ("grant-write-log / grant-write", "grant-write-log", "grant-write", "", None),
    ("plan20-log / plan20", "plan20-log", "plan20", "", None),
    ("hook-log / hook", "hook-log", "hook", "", None),
    ("read-same / floor-same", "read-same", "floor-same", "", None),
    ("grant-write-same / floor-same", "grant-write-same", "floor-same", "", None),
    ("plan20-same / floor-plan-same", "plan20-same", "floor-plan-same", "", None),
]
# Against a peer a ratio reads as a multiple (target 2×, or 0.0: no target); against a floor
# as a share.
def show(x, target):
    return f"{x:.2f}×" if target is not None and (target >= 1 or target == 0) else f"{x:.0%}"
print()
print("| ratio (requests/s) | " + " | ".join(f"round {r}" for r in rounds) + " | mean | target |")
print("|---|" + "---:|" * (len(rounds) + 2))
for label, a, b, target_text, target in ratios:
    absent = [n for n in (a, b) if n not in rows]
    if absent and any(n.endswith(("-log", "-nosync", "-room")) for n in (a, b)) and not any(n.endswith("-log") for n in rows):
        continue  # LOGGED=0
    if absent:
        why = "; ".join(f"{n}: {missing.get(n, 'not measured')}" for n in absent)
        print(f"| {label} | " + " | ".join("MISSING" for _ in rounds) + f" | MISSING ({why}) | {target_text} |")
        continue
    per = [rows[a][r][0] / rows[b][r][0] for r in rounds]
    m = mean(per)
    verdict = "" if not target else (" ✓" if m >= target else " ✗")
    print(f"| {label} | " + " | ".join(show(x, target) for x in per) + f" | {show(m, target)}{verdict} | {target_text} |")
if "proxied-c1-upstream-2ms" in rows:
    p = rows["proxied-c1-upstream-2ms"][1][1] / rows["direct-c1-upstream-2ms"][1][1]
    print(f"| proxied / direct p50, 1 connection, 2 ms upstream (issue 3) | {p:.2f}× | | | ≤ 1.2× |")

print()
print("p99 against the 5 ms target (16 connections):")
print()
print("| case | " + " | ".join(f"p99 ms round {r}" for r in rounds) + " | ≤ 5 ms |")
print("|---|" + "---:|" * (len(rounds) + 1))
for name, by_round in rows.items():
    if "-c1" in name or "upstream" in name:
        continue
    worst = max(by_round[r][2] for r in by_round)
    print(f"| {name} | " + " | ".join(f"{by_round[r][2]:.2f}" if r in by_round else "" for r in rounds) + f" | {'✓' if worst <= 5 else '✗'} |")

labels = {
    "floor": "HTTP floor (bare axum handler: bearer, parse, constant), fed the read's distinct bodies",
    "read": "`/v1/authorize` read, a new `project_id` and session every request",
    "grant-write": "`/v1/authorize` tokenless 1-file write under a grant, a new path and session every request",
    "floor-plan": "HTTP floor fed plan20's distinct bodies (20 files)",
    "plan20": "`/v1/authorize` 20-target plan-covered write, a new path list and file data every request",
    "floor-hook": "HTTP floor's hook route fed the hook's distinct bodies",
    "read-log": "the read on `serve --log-dir` (fsync)",
    "grant-write-log": "the grant-write on `serve --log-dir` (fsync)",
    "plan20-log": "plan20 on `serve --log-dir` (fsync)",
    "hook-log": "the hook on `serve --log-dir` (fsync)",
    "read-nosync": "the read on `serve --log-dir --log-durability none` (written, not synced)",
    "hook-nosync": "the hook on `serve --log-dir --log-durability none`",
    "proxied-nosync": "proxied on `serve --log-dir --log-durability none`",
    "read-room": "the read on `serve --log-dir` (fsync) with `log_room_bytes` 1 MiB",
    "grant-write-room": "the grant-write on `serve --log-dir` (fsync) with `log_room_bytes` 1 MiB",
    "hook-room": "the hook on `serve --log-dir` (fsync) with `log_room_bytes` 1 MiB",
    "proxied-room": "proxied on `serve --log-dir` (fsync) with `log_room_bytes` 1 MiB",
    "proxied-log": "proxied on `serve --log-dir` (fsync)",
    "proxied-c1-log": "proxied, 1 connection, on `serve --log-dir` (fsync)",
    "hook": "`/v1/hooks/claude-code` write to a reserved segment (ask), new session, tool_use_id, project, path",
    "cedar-agent": "cedar-agent 0.2 `POST /v1/is_authorized`, its shipped 3-policy example",
    "cerbos": "Cerbos PDP 0.55 `POST /api/check/resources`, one resource policy",
    "floor-same": "HTTP floor, the read's body every time",
    "read-same": "`/v1/authorize` read, the same body every time",
    "grant-write-same": "`/v1/authorize` write under a grant, the same body every time",
    "floor-plan-same": "HTTP floor, the same 20-file body every time",
    "plan20-same": "`/v1/authorize` 20-target plan-covered write, the same body every time",
    "proxied": "`/v1/design/call` get_project, proxied to the sandbox",
    "call": "`/v1/design/call` get_project, executed, new session id per call",
    "mcp": "`/mcp` tools/call get_project (2026-07-28), executed, new toolUseId per call",
    "mcp-service": "the same MCP call through rmcp's service (the fast path declined)",
    "direct": "the same `tools/call` straight to the sandbox",
    "floor-c1": "HTTP floor, 1 connection (distinct read bodies)",
    "read-c1": "`/v1/authorize` distinct read, 1 connection",
    "proxied-c1": "proxied, 1 connection",
    "direct-c1": "direct, 1 connection",
    "proxied-c1-upstream-2ms": "proxied, 1 connection, upstream answering in 2 ms",
    "direct-c1-upstream-2ms": "direct, 1 connection, upstream answering in 2 ms",
}
print()
print("For the README:")
print()
print("| case | " + " | ".join(f"req/s round {r}" for r in rounds) + " | p99 ms " + " / ".join(f"r{r}" for r in rounds) + " |")
print("|---|" + "---:|" * (len(rounds) + 1))
for name, by_round in rows.items():
    rps = " | ".join(f"{by_round[r][0]:,.0f}" if r in by_round else "" for r in rounds)
    p99 = " / ".join(f"{by_round[r][2]:.1f}" if r in by_round else "–" for r in rounds)
    print(f"| {labels.get(name, name)} | {rps} | {p99} |")
for peer, why in missing.items():
    print(f"| {peer}: MISSING ({why}) | " + " | ".join("–" for _ in rounds) + " | – |")
if os.path.exists(memory_path):
    _, r0, r1, r2, d1, d2, after = open(memory_path).read().split("\t")
    r0, r1, r2, after = (int(x) / 1024 for x in (r0, r1, r2, after))
    print()
    print(f"Resident memory (VmRSS) of a fresh `serve`: {r0:.1f} MiB before, {r1:.1f} MiB after {int(d1):,} "
          f"distinct calls, {r2:.1f} MiB after {int(d2):,} (first half +{r1 - r0:.1f} MiB, second half "
          f"+{r2 - r1:.1f} MiB; target ≤ 128 MiB and no growth). After the rounds: {after:.1f} MiB.")
PY
