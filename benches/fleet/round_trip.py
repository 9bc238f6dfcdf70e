"""The approval round trip across replicas (benches/fleet/run.sh): a finalize_plan asked on
replica A and held there with `GET /v1/approvals/{id}?wait=30s`, approved through replica B;
the time from sending B's approve until A's held wait answers. Prints one line per round:
milliseconds, then the status A's wait answered with."""
import http.client
import json
import sys
import threading
import time

A, B, ROUNDS = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
AGENT = "askgate-demo-agent-token"
APPROVER = "askgate-demo-approver-token"


def call(port, method, path, token, body=None):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    data = json.dumps(body) if body is not None else None
    connection.request(method, path, body=data, headers={"Authorization": f"Bearer {token}"})
    reply = connection.getresponse()
    answer = json.loads(reply.read() or b"{}")
    connection.close()
    return answer


run = int(time.time())
for i in range(ROUNDS):
    session = {"id": f"rt-{run}-{i}", "agent": "main", "mode": "default", "interactive": True}
    asked = call(A, "POST", "/v1/design/call", AGENT, {"session": session, "input": {
        "operation": "finalize_plan",
        "arguments": {"project_id": "p1", "writes": [f"site/rt/{i}.html"], "scope": "paths"}}})
    approval = asked.get("approval") or sys.exit(f"finalize_plan did not ask on A: {asked}")
    held = {}

    def wait():
        held["answer"] = call(A, "GET", f"/v1/approvals/{approval['id']}?wait=30s", AGENT)
        held["at"] = time.perf_counter()

    waiter = threading.Thread(target=wait)
    waiter.start()
    time.sleep(0.02)  # A's wait is in before the approve is sent
    sent = time.perf_counter()
    call(B, "POST", f"/v1/approvals/{approval['id']}/approve", APPROVER)
    waiter.join(60)
    if "at" not in held:
        sys.exit(f"A's wait for {approval['id']} did not answer within 60 s")
    if held["answer"].get("status") != "completed":
        sys.exit("the approval did not complete: " + json.dumps(held["answer"].get("result"))[:800])
    print(f"{(held['at'] - sent) * 1000:.3f}\t{held['answer'].get('status')}")
