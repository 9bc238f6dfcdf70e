#!/usr/bin/env python3
"""Generates the hardening-pack scenarios (issue 9 §6, findings C2 and C3) in this directory.

Each scenario runs with `policies/hardening/` (both files) unless it is a `without-pack`
scenario, which shows the reference behaviour the pack changes. Expectations are written
here from the pack's documented behaviour: a target with an invisible (default-ignorable)
character or a look-alike of CLAUDE.md / .claude is blocked like CLAUDE.md itself (client-facts
§8 6f: per-batch ask under a held grant, deny without one; a plan never covers it; bypass
lifts the ask as it does for CLAUDE.md); anything else is decided as without the pack.

Run from anywhere: `python3 tests/scenarios/hardening/generate.py`. Every `*.json` here is
rewritten from scratch.
"""

import glob
import json
import os

NOW = "2026-11-30T10:00:00Z"
HERE = os.path.dirname(os.path.abspath(__file__))
PACK = [
    "policies/hardening/invisible-characters.cedar",
    "policies/hardening/reserved-look-alikes.cedar",
]
IDENTITY = {
    "p1": {
        "name": "Q3 deck",
        "sharing": {"scope": "invited"},
        "url": "https://claude.ai/design/p/p1",
    }
}
GRANT = {"verified_grants": ["p1"], "project_identity": IDENTITY}
BATCH_ASK = ["grants.reserved-targets-ask", "modes.approved-call"]
INVISIBLE = "invisible (default-ignorable) character in path"
PATH_LOOK_ALIKE = "look-alike of a reserved path"
SEGMENT_LOOK_ALIKE = "look-alike of a reserved segment"


def write(path, operation="write_files"):
    if operation == "create_support_js":
        return {"project_id": "p1", "path": path}
    return {"project_id": "p1", "files": [{"path": path, "data": "x"}]}


def scenario(name, description, arguments, expect, operation="write_files",
             state=None, session=None, pack=True):
    body = {"name": name, "description": description, "now": NOW}
    if session is not None:
        body["session"] = session
    body["state"] = GRANT if state is None else state
    body["call"] = {
        "tool": "ClaudeDesign",
        "input": {"operation": operation, "arguments": arguments},
    }
    if pack:
        body["policy_files"] = PACK
    body["expect"] = expect
    return body


def asks(reason):
    return {"decision": "ask", "approval": "batch", "policies": BATCH_ASK,
            "reason_contains": f"{reason}: "}


def allowed(policies):
    return {"decision": "allow", "approval": None, "policies": policies}


# (file stem, code point description, path): invisible characters under a held grant (C2).
INVISIBLES = [
    ("word-joiner-claude-md", "U+2060 after CLAUDE.md", "CLAUDE.md\u2060"),
    ("word-joiner-index", "U+2060 inside index.html", "in\u2060dex.html"),
    ("mongolian-vowel-separator", "U+180E", "in\u180edex.html"),
    ("combining-grapheme-joiner", "U+034F", "in\u034fdex.html"),
    ("variation-selector-16", "U+FE0F", "logo\ufe0f.svg"),
    ("variation-selector-1", "U+FE00", "logo\ufe00.svg"),
    ("variation-selector-supplement", "U+E0100", "logo\U000e0100.svg"),
    ("variation-selector-256", "U+E01EF", "logo\U000e01ef.svg"),
    ("tag-latin-a", "tag U+E0041", "index.html\U000e0041"),
    ("tag-cancel", "tag U+E007F", "index\U000e007f.html"),
    ("language-tag", "U+E0001", "\U000e0001index.html"),
    ("hangul-filler", "U+3164", "a\u3164/index.html"),
    ("halfwidth-hangul-filler", "U+FFA0", "index\uffa0.html"),
    ("hangul-choseong-filler", "U+115F", "\u115findex.html"),
    ("hangul-jungseong-filler", "U+1160", "index\u1160.html"),
    ("invisible-times", "U+2062", "a\u2062b.html"),
    ("unassigned-ignorable", "U+2065 (unassigned, default-ignorable)", "a\u2065b.html"),
    ("khmer-vowel-inherent", "U+17B4", "a\u17b4b.html"),
    ("musical-symbol-begin-beam", "U+1D173", "a\U0001d173b.html"),
    ("interlinear-annotation", "U+FFF0 (unassigned, default-ignorable)", "a\ufff0b.html"),
]

# (file stem, description, path, reason): look-alikes of reserved names under a grant (C3).
LOOK_ALIKES = [
    ("fullwidth-claude-md", "fullwidth CLAUDE, NFKC-equal to CLAUDE.md",
     "\uff23\uff2c\uff21\uff35\uff24\uff25.md", PATH_LOOK_ALIKE),
    ("fullwidth-claude-md-all", "fullwidth CLAUDE．ｍｄ",
     "\uff23\uff2c\uff21\uff35\uff24\uff25\uff0e\uff4d\uff44", PATH_LOOK_ALIKE),
    ("cyrillic-capital-es", "Cyrillic С (U+0421) for C", "\u0421LAUDE.md", PATH_LOOK_ALIKE),
    ("cyrillic-small-es", "Cyrillic с (U+0441) for c", "\u0441laude.md", PATH_LOOK_ALIKE),
    ("greek-alpha", "Greek Α (U+0391) for A", "CL\u0391UDE.md", PATH_LOOK_ALIKE),
    ("capital-i-for-l", "ASCII I for l (UTS #39: confusable)", "cIaude.md", PATH_LOOK_ALIKE),
    ("digit-one-for-l", "ASCII 1 for l (UTS #39: confusable)", "c1aude.md", PATH_LOOK_ALIKE),
    ("rn-for-m", "ASCII rn for m (UTS #39: confusable)", "claude.rnd", PATH_LOOK_ALIKE),
    ("dot-claude-fullwidth-child", "fullwidth .ｃｌａｕｄｅ with a child",
     ".\uff43\uff4c\uff41\uff55\uff44\uff45/settings.json", PATH_LOOK_ALIKE),
    ("dot-claude-cyrillic", "Cyrillic с in .claude", ".\u0441laude", PATH_LOOK_ALIKE),
    ("claude-md-child", "a child of a look-alike CLAUDE.md", "\u0421LAUDE.md/x.html",
     PATH_LOOK_ALIKE),
    ("nested-segment", "a look-alike CLAUDE.md as a nested segment",
     "docs/\uff23\uff2c\uff21\uff35\uff24\uff25.md", SEGMENT_LOOK_ALIKE),
    ("nested-trailing-dot", "a nested look-alike with a trailing dot and space",
     "docs/\u0421LAUDE.md. ", SEGMENT_LOOK_ALIKE),
    ("division-slash", "U+2215 division slash makes a look-alike segment",
     "docs\u2215CLAUDE.md", SEGMENT_LOOK_ALIKE),
    ("nested-dot-claude", "a look-alike .claude as a nested segment",
     "src/.\u0441laude/hooks.json", SEGMENT_LOOK_ALIKE),
]


def scenarios():
    found = []
    for stem, what, path in INVISIBLES:
        found.append((f"invisible-{stem}-asks", scenario(
            f"invisible {stem} asks",
            f"issue 9 §6, finding C2: {what} is default-ignorable; with the hardening pack the "
            "target is blocked like CLAUDE.md, so under a held grant it asks per batch "
            "(client-facts §8 6f)",
            write(path), asks(INVISIBLE))))
    for stem, what, path, reason in LOOK_ALIKES:
        found.append((f"look-alike-{stem}-asks", scenario(
            f"look-alike {stem} asks",
            f"issue 9 §6, finding C3: {what}; its UTS #39 skeleton is a reserved name's, so "
            "with the hardening pack it is blocked like CLAUDE.md and asks per batch under a "
            "held grant (client-facts §8 6f)",
            write(path), asks(reason))))
    found += [
        ("rejected-soft-hyphen-keeps-baseline-reason", scenario(
            "rejected soft hyphen keeps baseline reason",
            "U+00AD is default-ignorable and already in the reference's rejected set: the pack "
            "leaves it to targets.rejected-character",
            write("in\u00addex.html"), asks("rejected character in path"))),
        ("claude-md-keeps-baseline-reason", scenario(
            "claude md keeps baseline reason",
            "CLAUDE.md itself is the baseline's reserved path: the pack's look-alike rules "
            "leave it (client-facts §2 L6n)",
            write("CLAUDE.md"), asks("reserved path"))),
        ("look-alike-create-support-js-asks", scenario(
            "look-alike create support js asks",
            "finding C3: create_support_js's path is a target too (client-facts §1.5)",
            write("\u0421LAUDE.md", "create_support_js"), asks(PATH_LOOK_ALIKE),
            operation="create_support_js")),
        ("look-alike-no-grant-denied", scenario(
            "look-alike no grant denied",
            "finding C3: without a grant a blocked target is denied (client-facts §8 6f), as "
            "CLAUDE.md is",
            write("\uff23\uff2c\uff21\uff35\uff24\uff25.md"),
            {"decision": "deny", "approval": None,
             "policies": ["grants.reserved-targets-denied"]},
            state={"project_identity": IDENTITY})),
        ("invisible-no-grant-denied", scenario(
            "invisible no grant denied",
            "finding C2: without a grant a blocked target is denied (client-facts §8 6f)",
            write("in\u2060dex.html"),
            {"decision": "deny", "approval": None,
             "policies": ["grants.reserved-targets-denied"]},
            state={"project_identity": IDENTITY})),
        ("look-alike-plan-covered-asks", scenario(
            "look-alike plan covered asks",
            "finding C3: a plan never covers a blocked target (client-facts §3, §8 step 5)",
            dict(write("\u0421LAUDE.md"), plan_token="tok-1"),
            {"decision": "ask", "approval": "batch",
             "policies": ["modes.approved-call", "plans.uncovered-asks"]},
            state={"plans": [{"token": "tok-1", "project_id": "p1",
                              "writes": ["\u0421LAUDE.md"], "deletes": [],
                              "expires_at": "2026-11-30T10:10:00Z"}]})),
        ("invisible-delete-plan-covered-asks", scenario(
            "invisible delete plan covered asks",
            "finding C2: deletes are targets too; a plan never covers a blocked target",
            {"project_id": "p1", "paths": ["in\u2060dex.html"], "plan_token": "tok-1"},
            {"decision": "ask", "approval": "batch",
             "policies": ["modes.approved-call", "plans.uncovered-asks"]},
            operation="delete_files",
            state={"plans": [{"token": "tok-1", "project_id": "p1", "writes": [],
                              "deletes": ["in\u2060dex.html"],
                              "expires_at": "2026-11-30T10:10:00Z"}]})),
        ("look-alike-bypass-allowed", scenario(
            "look-alike bypass allowed",
            "bypass lifts the per-batch ask for a blocked target, as for CLAUDE.md "
            "(client-facts §8 6f): the pack adds no deny",
            write("\u0421LAUDE.md"),
            allowed(["modes.bypass"]),
            session={"mode": "bypassPermissions"})),
        ("ordinary-unicode-allowed", scenario(
            "ordinary unicode allowed",
            "visible non-ASCII letters are neither invisible nor look-alikes of a reserved "
            "name: allowed under a held grant with the pack",
            write("caf\u00e9/\u65e5\u672c\u8a9e-na\u00efve.html"), allowed(["grants.held"]))),
        ("near-names-allowed", scenario(
            "near names allowed",
            "claude.mdx and .claudeignore are not look-alikes of a reserved name",
            {"project_id": "p1", "files": [{"path": "claude.mdx", "data": "x"},
                                           {"path": ".claudeignore", "data": "x"},
                                           {"path": "docs/claude.md.bak", "data": "x"}]},
            allowed(["grants.held"]))),
        ("look-alike-read-unaffected", scenario(
            "look-alike read unaffected",
            "reads are not target-classified (client-facts §8 step 4)",
            {"project_id": "p1", "path": "\u0421LAUDE.md"},
            allowed(["design.read-only"]), operation="read_file", state={})),
        ("without-pack-word-joiner-claude-md-allowed", scenario(
            "without pack word joiner claude md allowed",
            "reference behaviour (finding C2): without the pack U+2060 is not rejected and "
            "CLAUDE.md\u2060 is an ordinary path under a held grant",
            write("CLAUDE.md\u2060"), allowed(["grants.held"]), pack=False)),
        ("without-pack-fullwidth-claude-md-allowed", scenario(
            "without pack fullwidth claude md allowed",
            "reference behaviour (finding C3): without the pack the reserved rules compare "
            "lowercase ASCII only",
            write("\uff23\uff2c\uff21\uff35\uff24\uff25.md"), allowed(["grants.held"]),
            pack=False)),
        ("without-pack-cyrillic-claude-md-allowed", scenario(
            "without pack cyrillic claude md allowed",
            "reference behaviour (finding C3): Cyrillic С is not C to the reference",
            write("\u0421LAUDE.md"), allowed(["grants.held"]), pack=False)),
    ]
    return found


def main():
    for old in glob.glob(os.path.join(HERE, "*.json")):
        os.remove(old)
    for number, (stem, body) in enumerate(scenarios(), start=1):
        path = os.path.join(HERE, f"{number:03d}-{stem}.json")
        with open(path, "w", encoding="utf-8") as out:
            json.dump(body, out, indent=2)
            out.write("\n")


if __name__ == "__main__":
    main()
