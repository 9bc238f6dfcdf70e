-- wrk script: a new body every request (benches/http/run.sh's headline cases).
--
-- Each wrk thread numbers its requests 1, 2, 3, … and every id in a body carries the run
-- ($RUN, unique per wrk invocation), the thread (1, 2, … from setup(), so threads never
-- collide) and that number, so no two requests of a benchmark send the same body.
--
--   CASE=read     /v1/authorize ClaudeDesign get_project: new project_id and session id
--   CASE=grant    /v1/authorize tokenless 1-file write_files to p1 (held grant): new path,
--                 new file data, new session id
--   CASE=plan20   /v1/authorize plan-covered 20-file write_files: request m uses plan
--                 k = m mod #plans of the $PLAN_TOKENS plans (a plan holds at most 20 paths
--                 and a session one plan per project, so plan k is session bench-plan-<k>'s,
--                 paths site/p<kkk>/<ii>.html), its 20 paths in one of 160 orders (a start and
--                 a stride coprime to 20), new file data every request. The session and path
--                 *set* repeat every #plans requests, the ordered list every 160 × #plans.
--   CASE=hook     /v1/hooks/claude-code PreToolUse, ClaudeDesign write_files to a reserved
--                 segment (d<n>/.claude/settings.json: hook mode asks): new session_id,
--                 tool_use_id, project_id and path
--   CASE=call     /v1/design/call ClaudeDesign get_project p1, executed against the sandbox:
--                 new session id
--   CASE=mcp      /mcp tools/call, the same call as Claude Code 2.1.328 sends it on
--                 2026-07-28 (its _meta and Mcp-* headers): new claudecode/toolUseId
--   CASE=mcp-service  the same through rmcp's service (a weighted Accept, which the fast
--                 path declines), for comparison
--   CASE=mixed    read and grant alternately (the memory phase)
--   CASE=cedar    cedar-agent /v1/is_authorized on its shipped example: one of the example's
--                 3 users and 5 actions; the example's document every other request, else a
--                 fresh document id (no policy matches it: Deny)
--   CASE=cerbos   Cerbos /api/check/resources: principal agent-<n>, resource design_file
--                 f-<run>-<thread>-<n> with granted true on every other request, actions
--                 read and write
--
-- Optional: TOKEN (bearer), TOKENS_FILE (bearer tokens, one per line, instead of TOKEN: request
-- n of a thread presents one of them in turn, from a place that depends on the thread, so a
-- run spreads over every token: benches/http/jwt.sh's IdP callers), CHECK (a plain substring every answer must hold; the script then
-- counts answers without it and prints them from done()), STOP_AFTER (each thread stops after
-- this many answers; the memory phase).

local case = os.getenv("CASE") or "read"
local run = os.getenv("RUN") or "0"
local check = os.getenv("CHECK")
if check == "" then check = nil end
local stop_after = tonumber(os.getenv("STOP_AFTER") or "")

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json"
local token = os.getenv("TOKEN")
if token and token ~= "" then
  wrk.headers["Authorization"] = "Bearer " .. token
end

if case == "mcp" or case == "mcp-service" then
  wrk.headers["Accept"] = "application/json, text/event-stream"
  if case == "mcp-service" then
    -- a weighted Accept, which the fast path leaves to rmcp's service
    wrk.headers["Accept"] = "application/json;q=1, text/event-stream"
  end
  wrk.headers["Mcp-Protocol-Version"] = "2026-07-28"
  wrk.headers["Mcp-Method"] = "tools/call"
  wrk.headers["Mcp-Name"] = "ClaudeDesign"
end

local tokens = nil
local tokens_file = os.getenv("TOKENS_FILE")
if tokens_file and tokens_file ~= "" then
  tokens = {}
  for line in io.lines(tokens_file) do
    if line ~= "" then table.insert(tokens, line) end
  end
  assert(#tokens > 0, "no token in " .. tokens_file)
end

local threads = {}
local next_id = 1
function setup(thread)
  thread:set("id", next_id)
  next_id = next_id + 1
  table.insert(threads, thread)
end

local n = 0
answers = 0
bad = 0
first_bad = ""

local function session(tag)
  return '{"id":"' .. tag .. '","agent":"main","mode":"default","interactive":true}'
end

local function tag(prefix)
  return prefix .. run .. "-" .. id .. "-" .. n
end

local bodies = {}

bodies.read = function()
  return '{"session":' .. session(tag("s")) ..
    ',"tool":"ClaudeDesign","input":{"operation":"get_project","arguments":{"project_id":"' ..
    tag("p-") .. '"}}}'
end

bodies.grant = function()
  return '{"session":' .. session(tag("s")) ..
    ',"tool":"ClaudeDesign","input":{"operation":"write_files","arguments":{"project_id":"p1",' ..
    '"files":[{"path":"site/r' .. run .. "/t" .. id .. "/f" .. n .. '.html","data":"<p>' .. n ..
    '</p>"}]}}}'
end

local plan_tokens = {}
for t in string.gmatch(os.getenv("PLAN_TOKENS") or "", "[^,]+") do
  table.insert(plan_tokens, t)
end

local strides = { 1, 3, 7, 9, 11, 13, 17, 19 }
bodies.plan20 = function()
  -- Runs and threads start far apart in the schedule so they do not replay each other's lists.
  local m = n + (tonumber(run) * 2 + id) * 40009
  local plans = #plan_tokens
  local plan = m % plans
  local q = math.floor(m / plans)
  local start = q % 20
  local stride = strides[math.floor(q / 20) % 8 + 1]
  local files = {}
  for j = 0, 19 do
    local i = (start + j * stride) % 20
    files[#files + 1] = string.format('{"path":"site/p%03d/%02d.html","data":"<p>%s-%d</p>"}',
      plan, i, tag("d"), j)
  end
  return '{"session":' .. session("bench-plan-" .. plan) ..
    ',"tool":"ClaudeDesign","input":{"operation":"write_files","arguments":{"project_id":"p1",' ..
    '"plan_token":"' .. plan_tokens[plan + 1] .. '","files":[' .. table.concat(files, ",") .. ']}}}'
end

bodies.hook = function()
  return '{"session_id":"' .. tag("cc-") ..
    '","transcript_path":"/tmp/t.jsonl","cwd":"/tmp","permission_mode":"default",' ..
    '"hook_event_name":"PreToolUse","tool_name":"ClaudeDesign","tool_input":{"operation":' ..
    '"write_files","arguments":{"project_id":"' .. tag("p-") .. '","files":[{"path":"d' .. n ..
    '/.claude/settings.json","data":"{}"}]}},"tool_use_id":"' .. tag("toolu_") .. '"}'
end

bodies.call = function()
  return '{"session":' .. session(tag("s")) ..
    ',"input":{"operation":"get_project","arguments":{"project_id":"p1"}}}'
end

bodies.mcp = function()
  return '{"jsonrpc":"2.0","id":' .. n .. ',"method":"tools/call","params":{"name":"ClaudeDesign",' ..
    '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",' ..
    '"io.modelcontextprotocol/clientInfo":{"name":"askgate-bench","version":"0"},' ..
    '"io.modelcontextprotocol/clientCapabilities":{},"claudecode/toolUseId":"' .. tag("toolu_") ..
    '"},"arguments":{"operation":"get_project","arguments":{"project_id":"p1"}}}}'
end

bodies["mcp-service"] = bodies.mcp

bodies.mixed = function()
  if n % 2 == 0 then return bodies.read() end
  return bodies.grant()
end

local users = { "admin.1@domain.com", "editor.1@domain.com", "viewer.1@domain.com" }
local actions = { "get", "list", "update", "create", "delete" }
bodies.cedar = function()
  local resource = "cedar-agent.pdf"
  if n % 2 == 1 then resource = tag("doc-") end
  return '{"principal":"User::\\"' .. users[n % 3 + 1] .. '\\"","action":"Action::\\"' ..
    actions[n % 5 + 1] .. '\\"","resource":"Document::\\"' .. resource .. '\\""}'
end

bodies.cerbos = function()
  local granted = "false"
  if n % 2 == 0 then granted = "true" end
  return '{"requestId":"' .. tag("q") .. '","principal":{"id":"' .. tag("agent-") ..
    '","roles":["agent"]},"resources":[{"actions":["read","write"],"resource":' ..
    '{"kind":"design_file","id":"' .. tag("f-") .. '","attr":{"granted":' .. granted .. '}}}]}'
end

local make = assert(bodies[case], "unknown CASE " .. case)

function request()
  n = n + 1
  if tokens then
    local headers = {}
    for name, value in pairs(wrk.headers) do headers[name] = value end
    headers["Authorization"] = "Bearer " .. tokens[(n + id * 7919) % #tokens + 1]
    return wrk.format(nil, nil, headers, make())
  end
  return wrk.format(nil, nil, nil, make())
end

if check or stop_after then
  function response(status, headers, body)
    answers = answers + 1
    if check and (status ~= 200 or not string.find(body, check, 1, true)) then
      bad = bad + 1
      if first_bad == "" then first_bad = status .. " " .. string.sub(body, 1, 300) end
    end
    if stop_after and answers >= stop_after then
      wrk.thread:stop()
    end
  end
end

function done(summary, latency, requests)
  if not (check or stop_after) then return end
  local total, wrong, example = 0, 0, ""
  for _, thread in ipairs(threads) do
    total = total + (thread:get("answers") or 0)
    wrong = wrong + (thread:get("bad") or 0)
    local first = thread:get("first_bad") or ""
    if example == "" then example = first end
  end
  io.write(string.format("answers checked: %d, without the expected answer: %d\n", total, wrong))
  if example ~= "" then io.write("first unexpected answer: " .. example .. "\n") end
end
