#!/usr/bin/env python3
"""Generates the mode matrix scenarios under tests/scenarios/modes/matrix/.

4 calls x 6 modes x agent main/subagent x interactive true/false x permission_hook
false/true = 192 scenarios. Every expectation is computed here from the reference facts
(client-facts §5.2, §8, §11), written out below; askgate is never consulted.

Run from anywhere: `python3 tests/scenarios/modes/generate.py`. The output directory is
rewritten from scratch.
"""

import itertools
import json
import os
import shutil

NOW = "2026-11-30T10:00:00Z"
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "matrix")

MODES = ["default", "acceptEdits", "plan", "auto", "dontAsk", "bypassPermissions"]
IDENTITY = {
    "p1": {
        "name": "Q3 deck",
        "sharing": {"scope": "invited"},
        "url": "https://claude.ai/design/p/p1",
    }
}

# The four calls of the matrix. Consent is known granted in every one, so §8 step 3 never
# applies; gates pass (defaults).
CALLS = {
    "tokenless-write": {
        "summary": "tokenless write_files to a verified project",
        "input": {
            "operation": "write_files",
            "arguments": {"project_id": "p1", "files": [{"path": "index.html", "data": "<h1>hi</h1>"}]},
        },
        "state": {"consent": True, "verified_grants": ["p1"], "project_identity": IDENTITY},
    },
    "plan-covered-write": {
        "summary": "write_files covered by an approved, unexpired plan",
        "input": {
            "operation": "write_files",
            "arguments": {
                "project_id": "p1",
                "plan_token": "tok-1",
                "files": [{"path": "index.html", "data": "<h1>hi</h1>"}],
            },
        },
        "state": {
            "consent": True,
            "plans": [
                {
                    "token": "tok-1",
                    "project_id": "p1",
                    "writes": ["index.html"],
                    "deletes": [],
                    "expires_at": "2026-11-30T10:10:00Z",
                }
            ],
        },
    },
    "read": {
        "summary": "get_project (read-only)",
        "input": {"operation": "get_project", "arguments": {"project_id": "p1"}},
        "state": {"consent": True},
    },
    "destructive": {
        "summary": "update_sharing (destructive)",
        "input": {"operation": "update_sharing", "arguments": {"project_id": "p1", "scope": "invited"}},
        "state": {"consent": True},
    },
}


def check_permissions(call, mode, main, interactive, hook):
    """The tool's own checkPermissions result (§8 steps 1-9): (decision, policy id)."""
    # F6n (§5.2): the main agent and no PermissionRequest hook.
    f6n = main and not hook
    if call == "read":
        # §8 step 4: read-only operations are allowed.
        return "allow", "design.read-only"
    if call == "plan-covered-write":
        # §8 step 5: allowed when the mode is not plan, F6n holds and the plan matches
        # (matching does not look at interactivity).
        if mode != "plan" and f6n:
            return "allow", "plans.covered"
        # §8 step 9: a write whose token does not (here: may not) match asks.
        return "ask", "plans.uncovered-asks"
    if call == "destructive":
        # §8 step 8: destructive operations ask.
        return "ask", "design.destructive-asks"
    # Tokenless write_files to a verified project (§8 step 6).
    if not interactive:
        # 6a: allow only with a project id, F6n, no recard, passing targets, mode not plan,
        # and a verified/granted project; otherwise deny.
        if f6n and mode != "plan":
            return "allow", "grants.non-interactive-allowed"
        return "deny", "grants.non-interactive-denied"
    if not f6n:
        # 6b: subagents and hook contexts are denied even when a grant exists.
        return "deny", "grants.subagent-or-hook-denied"
    if mode == "plan":
        # 6d: targets pass, plan mode, grant held -> the generic ask; plan never auto-allows.
        return "ask", "grants.plan-mode-asks"
    # 6e: already verified -> allow.
    return "allow", "grants.held"


def pipeline(result, mode, interactive, hook):
    """The generic permission pipeline applied to a safetyCheck result (§8 last part, §11)."""
    decision, policy = result
    if decision != "ask":
        # The tool's own allow and deny stand in every mode (bypass never lifts a deny).
        return decision, policy, None
    # All these asks are safetyCheck without circuitBreaker: not bypass-immune.
    if mode == "bypassPermissions":
        return "allow", None, None
    # dontAsk -> deny "...running in don't ask mode".
    if mode == "dontAsk":
        return "deny", None, "don't ask mode"
    if not interactive:
        # Headless: PermissionRequest hooks are consulted (the ask goes to the hook);
        # without a hook -> deny "Permission prompts are not available in this context".
        if hook:
            return "ask", policy, None
        return "deny", None, "not available in this context"
    # default / acceptEdits (allow rules never auto-approve safetyCheck asks), plan (a
    # safetyCheck or plan-mode ask is returned as-is), auto (not classifier-approvable, so
    # it falls back to the interactive prompt): the ask stands.
    return "ask", policy, None


def scenario(call, mode, main, interactive, hook):
    decision, policy, reason = pipeline(
        check_permissions(call, mode, main, interactive, hook), mode, interactive, hook
    )
    expect = {"decision": decision, "approval": "batch" if decision == "ask" else None}
    # The deciding policy is named when the tool's own check decided; allow results may be
    # joined by the bypass permit, so only deny and ask name their rules. An ask also names
    # the permit that lets the approved call run (modes.approved-call), as askgate reports
    # the determining policies of both questions.
    if policy is not None and decision == "deny":
        expect["policies"] = [policy]
    if policy is not None and decision == "ask":
        expect["policies"] = sorted([policy, "modes.approved-call"])
    if reason is not None:
        expect["reason_contains"] = reason
    agent = "main" if main else "subagent"
    session = {
        "agent": agent,
        "mode": mode,
        "interactive": interactive,
        "permission_hook": hook,
    }
    name = (
        f"{CALLS[call]['summary']}, mode {mode}, {agent}, "
        f"{'interactive' if interactive else 'non-interactive'}, "
        f"{'with' if hook else 'no'} permission hook"
    )
    return {
        "name": name,
        "description": "client-facts §8 (steps 4-6, pipeline), §5.2 F6n/m8a, §11 modes: generated mode matrix",
        "now": NOW,
        "session": session,
        "state": CALLS[call]["state"],
        "call": {"tool": "ClaudeDesign", "input": CALLS[call]["input"]},
        "expect": expect,
    }


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    number = 0
    for call, mode, main_agent, interactive, hook in itertools.product(
        CALLS, MODES, [True, False], [True, False], [False, True]
    ):
        number += 1
        slug = "-".join(
            [
                call,
                mode.lower(),
                "main" if main_agent else "subagent",
                "interactive" if interactive else "headless",
                "hook" if hook else "nohook",
            ]
        )
        path = os.path.join(OUT, f"{number:03d}-{slug}.json")
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(scenario(call, mode, main_agent, interactive, hook), handle, indent=2)
            handle.write("\n")
    print(f"wrote {number} scenarios to {OUT}")


if __name__ == "__main__":
    main()
