//! `docs/glossary.md` explains every reference identifier and finding id the project cites
//! (issue 39 §3): `src/`, `policies/`, `schema/`, `docs/` and `tests/` are scanned for the
//! citation forms below and each one found must have a row in the glossary.
//!
//! A reference identifier is a minified name of three characters, cited in backticks
//! (`` `g0f` ``) or right after a client-facts section (`§2 GnS`), that holds a digit or an
//! upper-case letter after the first character beside a lower-case one (so `` `now` ``, `` `Err` ``,
//! `` `TTL` `` and `` `u64` `` are not). A finding id is a report letter and a number from 1
//! (`A2`, `C17`, `P10`) cited as `(N6)`, `(F8, C17)`, `finding C2`, `findings C2 and C3` or
//! `A2:` at the start of a comment or description: a list or a label, never a word in a sentence.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The directories whose citations the glossary must explain.
const SCANNED: [&str; 5] = ["src", "policies", "schema", "docs", "tests"];

/// The report letters of the finding ids (docs/glossary.md says which report each names).
const REPORTS: &str = "ACFHNPRT";

/// Mixed-case units and names that have the shape of a minified identifier.
const NOT_IDENTIFIERS: [&str; 4] = ["IdP", "KiB", "MiB", "GiB"];

/// What a text cites: reference identifiers and finding ids.
#[derive(Default)]
struct Citations {
    identifiers: Vec<String>,
    findings: Vec<String>,
}

fn citations(text: &str) -> Citations {
    let mut found = Citations::default();
    for (index, span) in text.split('`').enumerate() {
        if index % 2 == 1 && is_identifier(span) {
            found.identifiers.push(span.to_string());
        }
    }
    for (at, _) in text.match_indices('§') {
        let after = text[at + '§'.len_utf8()..]
            .trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
        if let Some(rest) = after.strip_prefix(' ') {
            let word: String = rest
                .chars()
                .take_while(char::is_ascii_alphanumeric)
                .collect();
            if is_identifier(&word) {
                found.identifiers.push(word);
            }
        }
    }
    found.findings = finding_ids(text);
    found
}

fn is_identifier(word: &str) -> bool {
    let chars: Vec<char> = word.chars().collect();
    if chars.len() != 3
        || !chars[0].is_ascii_alphabetic()
        || !chars.iter().all(char::is_ascii_alphanumeric)
        || NOT_IDENTIFIERS.contains(&word)
    {
        return false;
    }
    let rust_primitive =
        matches!(chars[0], 'u' | 'i' | 'f') && chars[1..].iter().all(char::is_ascii_digit);
    let has_digit = chars.iter().any(char::is_ascii_digit);
    let inner_upper = chars[1..].iter().any(char::is_ascii_uppercase);
    let has_lower = chars.iter().any(char::is_ascii_lowercase);
    (has_digit && !rust_primitive) || (inner_upper && has_lower)
}

/// What may stand right before a cited finding id: a list's opening or separator, the word
/// "finding(s)", or the start of a comment or a scenario's description.
const BEFORE: [&str; 11] = [
    "(",
    ", ",
    "; ",
    "and ",
    "/ ",
    "finding ",
    "findings ",
    "/// ",
    "//! ",
    "// ",
    "\": \"",
];

/// What may follow it: the list's end or separator, a label's colon, a possessive or `of`.
const AFTER: [&str; 10] = [")", ",", ";", ":", "'s", " and ", " of ", " / ", " (", "."];

fn finding_ids(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    for (at, &byte) in bytes.iter().enumerate() {
        if !REPORTS.as_bytes().contains(&byte) || (at > 0 && is_word(bytes[at - 1])) {
            continue;
        }
        let digits = bytes[at + 1..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let end = at + 1 + digits;
        if !(1..=2).contains(&digits)
            || bytes[at + 1] == b'0'
            || bytes.get(end).is_some_and(|&b| is_word(b))
        {
            continue;
        }
        let before = text[..at].to_ascii_lowercase();
        let after = &text[end..];
        if BEFORE.iter().any(|cue| before.ends_with(cue))
            && (after.is_empty() || AFTER.iter().any(|cue| after.starts_with(cue)))
        {
            found.push(text[at..end].to_string());
        }
    }
    found
}

fn is_word(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

/// Every citation under `root`'s scanned directories, with the first place citing it.
fn cited(root: &Path) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
    let mut identifiers = BTreeMap::new();
    let mut findings = BTreeMap::new();
    let mut pending: Vec<_> = SCANNED.iter().map(|dir| root.join(dir)).collect();
    while let Some(path) = pending.pop() {
        if path.is_dir() {
            pending.extend(
                std::fs::read_dir(&path)
                    .unwrap()
                    .map(|entry| entry.unwrap().path()),
            );
            continue;
        }
        let relative = path.strip_prefix(root).unwrap_or(&path);
        if relative == Path::new("docs/glossary.md") || relative == Path::new(file!()) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        for (number, line) in text.lines().enumerate() {
            let place = format!("{}:{}", relative.display(), number + 1);
            let found = citations(line);
            for id in found.identifiers {
                identifiers.entry(id).or_insert_with(|| place.clone());
            }
            for id in found.findings {
                findings.entry(id).or_insert_with(|| place.clone());
            }
        }
    }
    (identifiers, findings)
}

/// The first cell of every table row of the glossary, without backticks.
fn entries(glossary: &str) -> BTreeSet<String> {
    glossary
        .lines()
        .filter_map(|line| line.strip_prefix('|'))
        .filter_map(|row| row.split('|').next())
        .map(|cell| cell.trim().trim_matches('`').to_string())
        .collect()
}

/// The citations without an entry, said as `id (first cited at file:line)`.
fn unexplained(cited: &BTreeMap<String, String>, entries: &BTreeSet<String>) -> Vec<String> {
    cited
        .iter()
        .filter(|(id, _)| !entries.contains(*id))
        .map(|(id, place)| format!("{id} (first cited at {place})"))
        .collect()
}

#[test]
fn every_cited_identifier_and_finding_id_has_a_glossary_entry() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let glossary = std::fs::read_to_string(root.join("docs/glossary.md")).unwrap();
    let entries = entries(&glossary);
    let (identifiers, findings) = cited(root);
    assert!(identifiers.len() >= 35, "{identifiers:?}");
    assert!(findings.len() >= 55, "{findings:?}");
    let mut missing = unexplained(&identifiers, &entries);
    missing.extend(unexplained(&findings, &entries));
    assert!(
        missing.is_empty(),
        "cited but not in docs/glossary.md:\n{}",
        missing.join("\n")
    );
}

#[test]
fn the_citation_rules_take_the_cited_forms_and_leave_ordinary_words() {
    let text = "§3 `g0f` and `jnS`; (client-facts §2 GnS). Fixed (N6), (F8, C17), finding C2, \
                findings C2 and C3, A1 / P6: x\n/// A2: the card\n\"description\": \"P1: plan\"\n\
                `now` `Err` `TTL` `u64` `IdP` §1.4 key at(T0) \"project_id\": \"P1\", \\u{B0} \
                UnS: C1 controls, what H1 found, with the F2 repro";
    let found = citations(text);
    assert_eq!(found.identifiers, ["g0f", "jnS", "GnS"]);
    assert_eq!(
        found.findings,
        ["N6", "F8", "C17", "C2", "C2", "C3", "A1", "P6", "A2", "P1"]
    );
}

#[test]
fn a_glossary_without_a_cited_entry_is_reported() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let glossary = std::fs::read_to_string(root.join("docs/glossary.md")).unwrap();
    let (identifiers, findings) = cited(root);
    let without: String = glossary
        .lines()
        .filter(|line| !line.starts_with("| `g0f` |") && !line.starts_with("| N6 |"))
        .map(|line| format!("{line}\n"))
        .collect();
    let entries = entries(&without);
    let missing: Vec<String> = unexplained(&identifiers, &entries)
        .into_iter()
        .chain(unexplained(&findings, &entries))
        .map(|line| line.split(' ').next().unwrap().to_string())
        .collect();
    assert_eq!(missing, ["g0f", "N6"]);
}
