-- wrk script: POST the JSON body in $BODY_FILE with the bearer token in $TOKEN (and an
-- optional extra header $HEADER_NAME: $HEADER_VALUE).
local f = assert(io.open(os.getenv("BODY_FILE"), "r"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json"
if os.getenv("TOKEN") and os.getenv("TOKEN") ~= "" then
  wrk.headers["Authorization"] = "Bearer " .. os.getenv("TOKEN")
end
if os.getenv("HEADER_NAME") and os.getenv("HEADER_NAME") ~= "" then
  wrk.headers[os.getenv("HEADER_NAME")] = os.getenv("HEADER_VALUE")
end
