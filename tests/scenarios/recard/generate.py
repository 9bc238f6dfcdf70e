#!/usr/bin/env python3
"""Generates the recard scenarios under tests/scenarios/recard/ (issue 23 §1).

A recard flag (one project's `recard`, or `recard_all` after consent was seeded false)
withdraws trust from the *server's* grant only (client-facts §5.1): a project the human has
verified keeps its grant (§8 6e: allow; 6f: reserved targets ask per batch), and only the
non-interactive rule (§8 6a) also refuses a verified project that is flagged.

3 grant states x 9 sessions x 2 targets = 54 scenarios. Every expectation is computed here from
the reference facts (client-facts §5, §8, §11), written out below; askgate is never consulted.

Run from anywhere: `python3 tests/scenarios/recard/generate.py`. Files named `NNN-*.json`
in this directory are rewritten from scratch.
"""

import glob
import itertools
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
GRANTED = {"available": True, "projects": ["p1"]}

# What this process knows about p1's grant; the server holds the grant in every one.
STATES = {
    "verified-recard-all": {
        "summary": "verified, recard-all set",
        "verified": True,
        "state": {"recard_all": True, "verified_grants": ["p1"]},
    },
    "verified-recard": {
        "summary": "verified, flagged for recard",
        "verified": True,
        "state": {"recard": ["p1"], "verified_grants": ["p1"]},
    },
    "server-granted-recard-all": {
        "summary": "granted by the server only, recard-all set",
        "verified": False,
        "state": {"recard_all": True},
    },
}

# The main agent without a permission-request hook in every mode, and headless.
SESSIONS = {
    "default": {"mode": "default"},
    "acceptedits": {"mode": "acceptEdits"},
    "auto": {"mode": "auto"},
    "plan": {"mode": "plan"},
    "plan-bypass-available": {"mode": "plan", "bypass_available": True},
    "bypass": {"mode": "bypassPermissions"},
    "dontask": {"mode": "dontAsk"},
    "headless": {"mode": "default", "interactive": False},
    "headless-bypass": {"mode": "bypassPermissions", "interactive": False},
}

TARGETS = {
    "ordinary": {"summary": "an ordinary target", "path": "index.html"},
    "reserved": {"summary": "a reserved target (CLAUDE.md)", "path": "CLAUDE.md"},
}


def check_permissions(verified, session, ordinary):
    """§8 step 6 for a tokenless write_files of the main agent without a hook, consent
    granted, the server granting p1 and p1 flagged for recard: (decision, policy, approval)."""
    interactive = session.get("interactive", True)
    plan = session["mode"] == "plan"
    flagged = True
    # A grant is held when verified, or granted by the server and not flagged (§8 6e, 6f).
    held = verified or not flagged
    if not interactive:
        # 6a: allow only when not flagged for recard (among the other conditions).
        if ordinary and not plan and not flagged:
            return "allow", "grants.non-interactive-allowed", None
        return "deny", "grants.non-interactive-denied", None
    if ordinary and plan:
        # 6d: plan mode denies without a grant; with one it falls through to the ask.
        if not held:
            return "deny", "grants.plan-mode-denied", None
        return "ask", "grants.plan-mode-asks", "batch"
    if ordinary:
        # 6e: a verified project is allowed; server-granted under recard has no grant.
        if verified:
            return "allow", "grants.held", None
        if session["mode"] == "bypassPermissions":
            # m8a is false: the card cannot be shown.
            return "deny", "grants.card-unavailable-in-mode", None
        return "ask", "grants.card-asks", "grant"
    # 6f: reserved targets ask per batch under a held grant, else deny.
    if held:
        return "ask", "grants.reserved-targets-ask", "batch"
    return "deny", "grants.reserved-targets-denied", None


def pipeline(result, session):
    """The generic permission pipeline on a safetyCheck result (§8 last part, §11)."""
    decision, policy, approval = result
    if decision != "ask":
        return decision, policy, approval, None
    bypass = session["mode"] == "bypassPermissions" or (
        session["mode"] == "plan" and session.get("bypass_available", False)
    )
    if bypass:
        return "allow", None, None, None
    if session["mode"] == "dontAsk":
        return "deny", None, None, "don't ask mode"
    return "ask", policy, approval, None


def scenario(state_name, session_name, target_name):
    grant_state = STATES[state_name]
    session = SESSIONS[session_name]
    target = TARGETS[target_name]
    decision, policy, approval, reason = pipeline(
        check_permissions(grant_state["verified"], session, target_name == "ordinary"),
        session,
    )
    expect = {"decision": decision, "approval": approval}
    # Allows may be joined by the bypass permit, so only asks and the tool's denies name rules.
    if policy is not None and decision == "deny":
        expect["policies"] = [policy]
    if policy is not None and decision == "ask":
        expect["policies"] = sorted([policy, "modes.approved-call"])
    if reason is not None:
        expect["reason_contains"] = reason
    state = {
        "consent": True,
        "server_grants": GRANTED,
        "project_identity": IDENTITY,
        **grant_state["state"],
    }
    return {
        "name": f"{grant_state['summary']}, {session_name}, {target['summary']}",
        "description": "client-facts §5.1 (recard withdraws trust from the server's grant only), "
        "§8 6a/6d/6e/6f, §11 modes: generated recard matrix (issue 23 §1)",
        "now": NOW,
        "session": {"agent": "main", "permission_hook": False, **session},
        "state": state,
        "call": {
            "tool": "ClaudeDesign",
            "input": {
                "operation": "write_files",
                "arguments": {
                    "project_id": "p1",
                    "files": [{"path": target["path"], "data": "<h1>hi</h1>"}],
                },
            },
        },
        "expect": expect,
    }


def main():
    for old in glob.glob(os.path.join(HERE, "[0-9][0-9][0-9]-*.json")):
        os.remove(old)
    number = 0
    for state_name, session_name, target_name in itertools.product(STATES, SESSIONS, TARGETS):
        number += 1
        path = os.path.join(HERE, f"{number:03d}-{state_name}-{session_name}-{target_name}.json")
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(scenario(state_name, session_name, target_name), handle, indent=2)
            handle.write("\n")
    print(f"wrote {number} scenarios to {HERE}")


if __name__ == "__main__":
    main()
