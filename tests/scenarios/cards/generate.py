#!/usr/bin/env python3
"""Generates the card scenarios under tests/scenarios/cards/ (issue 23 §2).

A card states what approving will actually do (SPEC §5). The decision (ask or deny) is the
reference's (client-facts §8 steps 3 and 7, the §8 pipeline); the card kind is askgate's
truthful choice where client-facts leaves it open (docs/approvers.md):

- finalize_plan asks for a `plan` (these paths for 15 minutes) only where approving registers
  one (§3 g0f): the main agent without a permission-request hook, a prompt that reaches a
  human, not bypass, and paths a plan can hold (jnS: at most 20 writes and 20 deletes, paths of
  at most 80 characters with no rejected character, the 2,000-character display). Anywhere
  else the same ask is `batch`: this call only, no plan kept.
- the consent ask is `consent` (connects Claude Design until revoked) only where approving
  records it (SPEC §5: subagents, permission-hook sessions and sessions that cannot prompt
  never mint consent); anywhere else it is `batch`: this call only, Design left unconnected.

Run from anywhere: `python3 tests/scenarios/cards/generate.py`. Files named `NNN-*.json` in
this directory are rewritten from scratch.
"""

import glob
import json
import os

NOW = "2026-11-30T10:00:00Z"
HERE = os.path.dirname(os.path.abspath(__file__))
IDENTITY = {
    "p1": {
        "name": "Q3 deck",
        "sharing": {"scope": "invited"},
        "url": "https://claude.ai/design/p/p1",
    }
}

MAIN = {}
SUBAGENT = {"agent": "subagent", "agent_id": "sub-1"}
HOOK = {"permission_hook": True}
HEADLESS_HOOK = {"interactive": False, "permission_hook": True}
HEADLESS = {"interactive": False}


def pages(count, length=None):
    """`count` distinct write paths, each exactly `length` characters when given."""
    names = [f"page-{index:02d}.html" for index in range(count)]
    if length is None:
        return names
    return [name.rjust(length, "x") for name in names]


def finalize(writes, deletes=()):
    arguments = {"project_id": "p1", "writes": list(writes), "scope": "paths"}
    if deletes:
        arguments["deletes"] = list(deletes)
    return "finalize_plan", arguments


PLAN = ("ask", "plan", ["design.finalize-plan-asks", "modes.approved-call"])
PLAN_THIS_CALL = ("ask", "batch", ["design.finalize-plan-asks-this-call", "modes.approved-call"])
CONSENT_READ = ("ask", "consent", ["consent.connect-asks-read", "design.read-only", "modes.approved-call"])
CONSENT_WRITE = ("ask", "consent", ["consent.connect-asks-write", "modes.approved-call"])
THIS_CALL_READ = ("ask", "batch", ["consent.this-call-asks", "design.read-only", "modes.approved-call"])
THIS_CALL_WRITE = ("ask", "batch", ["consent.this-call-asks", "modes.approved-call"])
ALLOW = ("allow", None, None)

# (slug, summary, session, consent, (operation, arguments), (decision, approval, policies))
CASES = [
    # finalize_plan (§8 step 7 asks; §3 g0f says whether approving registers the plan)
    ("finalize-main-plan", "finalize_plan by the main agent: a plan card", MAIN, True, finalize(pages(2)), PLAN),
    ("finalize-main-accept-edits-plan", "finalize_plan in acceptEdits: a plan card", {"mode": "acceptEdits"}, True, finalize(pages(2)), PLAN),
    ("finalize-main-plan-mode-plan", "finalize_plan in plan mode registers its plan (g0f excludes only plan with bypass available)", {"mode": "plan"}, True, finalize(pages(2)), PLAN),
    ("finalize-subagent-this-call", "finalize_plan by a subagent: no plan is kept, this call only", SUBAGENT, True, finalize(pages(2)), PLAN_THIS_CALL),
    ("finalize-hook-this-call", "finalize_plan with a permission-request hook: no plan is kept", HOOK, True, finalize(pages(2)), PLAN_THIS_CALL),
    ("finalize-headless-hook-this-call", "finalize_plan headless with a hook: the ask goes to the hook, no plan is kept", HEADLESS_HOOK, True, finalize(pages(2)), PLAN_THIS_CALL),
    ("finalize-headless-denied", "finalize_plan headless without a hook: prompts are not available", HEADLESS, True, finalize(pages(2)), ("deny", None, None)),
    ("finalize-subagent-bypass-allowed", "finalize_plan by a subagent in bypass: the ask is lifted", {**SUBAGENT, "mode": "bypassPermissions"}, True, finalize(pages(2)), ALLOW),
    ("finalize-subagent-dontask-denied", "finalize_plan by a subagent in dontAsk: denied", {**SUBAGENT, "mode": "dontAsk"}, True, finalize(pages(2)), ("deny", None, None)),
    ("finalize-20-writes-plan", "finalize_plan of 20 writes: a plan card", MAIN, True, finalize(pages(20)), PLAN),
    ("finalize-21-writes-this-call", "finalize_plan of 21 writes can never be registered: this call only", MAIN, True, finalize(pages(21)), PLAN_THIS_CALL),
    ("finalize-21-deletes-this-call", "finalize_plan of 21 deletes can never be registered", MAIN, True, finalize([], pages(21)), PLAN_THIS_CALL),
    ("finalize-path-80-plan", "a plan path of 80 characters can be registered", MAIN, True, finalize(pages(1, 80)), PLAN),
    ("finalize-path-81-this-call", "a plan path of 81 characters cannot be registered", MAIN, True, finalize(pages(1, 81)), PLAN_THIS_CALL),
    ("finalize-rejected-character-this-call", "a plan path with a rejected character cannot be registered", MAIN, True, finalize(["a#b.html"]), PLAN_THIS_CALL),
    ("finalize-over-display-budget-this-call", "20 writes and 2 deletes of 80 characters exceed the 2,000-character display", MAIN, True, finalize(pages(20, 80), pages(2, 80)), PLAN_THIS_CALL),
    ("finalize-subagent-21-writes-this-call", "a subagent's finalize_plan of 21 writes: this call only", SUBAGENT, True, finalize(pages(21)), PLAN_THIS_CALL),
    # The consent ask (§8 step 3); only a session that records can connect Design (SPEC §5)
    ("consent-main-read-consent", "the main agent's read asks to connect Claude Design", MAIN, False, ("get_project", {"project_id": "p1"}), CONSENT_READ),
    ("consent-main-write-consent", "the main agent's write asks to connect Claude Design", MAIN, False, ("render_preview", {"project_id": "p1", "path": "index.html"}), CONSENT_WRITE),
    ("consent-main-finalize-consent", "the main agent's finalize_plan asks to connect first", MAIN, False, finalize(pages(2)), CONSENT_WRITE),
    ("consent-subagent-read-this-call", "a subagent's read: approving runs it once, Design stays unconnected", SUBAGENT, False, ("get_project", {"project_id": "p1"}), THIS_CALL_READ),
    ("consent-subagent-write-this-call", "a subagent's write: this call only", SUBAGENT, False, ("render_preview", {"project_id": "p1", "path": "index.html"}), THIS_CALL_WRITE),
    ("consent-subagent-finalize-this-call", "a subagent's finalize_plan: no consent and no plan kept", SUBAGENT, False, finalize(pages(2)), THIS_CALL_WRITE),
    ("consent-subagent-tokenless-write-this-call", "a subagent's tokenless write asks before 6b: this call only", SUBAGENT, False, ("write_files", {"project_id": "p1", "files": [{"path": "index.html", "data": "x"}]}), THIS_CALL_WRITE),
    ("consent-hook-read-this-call", "a permission-hook session's read: this call only", HOOK, False, ("get_project", {"project_id": "p1"}), THIS_CALL_READ),
    ("consent-headless-hook-read-this-call", "headless with a hook: the ask goes to the hook, this call only", HEADLESS_HOOK, False, ("get_project", {"project_id": "p1"}), THIS_CALL_READ),
    ("consent-headless-read-denied", "headless without a hook: prompts are not available", HEADLESS, False, ("get_project", {"project_id": "p1"}), ("deny", None, None)),
    ("consent-subagent-list-allowed", "list never checks consent", SUBAGENT, False, ("list", {}), ALLOW),
    ("consent-subagent-bypass-allowed", "a subagent in bypass: the ask is lifted", {**SUBAGENT, "mode": "bypassPermissions"}, False, ("get_project", {"project_id": "p1"}), ALLOW),
    ("consent-subagent-dontask-denied", "a subagent in dontAsk: denied", {**SUBAGENT, "mode": "dontAsk"}, False, ("get_project", {"project_id": "p1"}), ("deny", None, None)),
    ("consent-subagent-too-large-denied", "a subagent's undisplayable tokenless write is denied at step 3", SUBAGENT, False, ("write_files", {"project_id": "p1", "files": [{"path": p, "data": "x"} for p in pages(21)]}), ("deny", None, ["consent.batch-too-large"])),
]


def scenario(slug, summary, session, consent, call, expected):
    operation, arguments = call
    decision, approval, policies = expected
    expect = {"decision": decision, "approval": approval}
    if policies is not None:
        expect["policies"] = policies
    return {
        "name": summary,
        "description": "SPEC §5 (cards state their scope truthfully), client-facts §3 g0f, §8 "
        "steps 3 and 7: generated card scenarios (issue 23 §2)",
        "now": NOW,
        "session": session,
        "state": {"consent": consent, "project_identity": IDENTITY},
        "call": {"tool": "ClaudeDesign", "input": {"operation": operation, "arguments": arguments}},
        "expect": expect,
    }


def main():
    for old in glob.glob(os.path.join(HERE, "[0-9][0-9][0-9]-*.json")):
        os.remove(old)
    for number, case in enumerate(CASES, start=1):
        path = os.path.join(HERE, f"{number:03d}-{case[0]}.json")
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(scenario(*case), handle, indent=2)
            handle.write("\n")
    print(f"wrote {len(CASES)} scenarios to {HERE}")


if __name__ == "__main__":
    main()
