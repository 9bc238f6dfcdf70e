//! authz::reason: turns the determining policies into ids and a human reason. `@reason` text
//! may name facts as `{design.operation}`; they are filled from the request context.

use std::collections::BTreeSet;

use cedar_policy::PolicyId;

use super::context::CallContext;
use super::snapshot::PolicySnapshot;

/// The `@id`s of `policies`, sorted.
pub fn policy_ids(snapshot: &PolicySnapshot, policies: &BTreeSet<PolicyId>) -> Vec<String> {
    let mut ids: Vec<String> = policies
        .iter()
        .map(|id| {
            snapshot
                .meta(id)
                .map_or_else(|| id.to_string(), |meta| meta.id.clone())
        })
        .collect();
    ids.sort();
    ids
}

/// The reasons of `policies` in id order, placeholders filled, joined with "; ".
pub fn reasons(
    snapshot: &PolicySnapshot,
    policies: &BTreeSet<PolicyId>,
    context: &CallContext,
) -> String {
    let mut texts: Vec<(String, String)> = policies
        .iter()
        .filter_map(|id| snapshot.meta(id))
        .map(|meta| (meta.id.clone(), meta.reason.clone()))
        .collect();
    texts.sort();
    let needs_facts = texts.iter().any(|(_, text)| text.contains('{'));
    let facts = if needs_facts {
        serde_json::to_value(context).ok()
    } else {
        None
    };
    let mut rendered: Vec<String> = Vec::with_capacity(texts.len());
    for (_, text) in texts {
        let text = match &facts {
            Some(facts) => fill(&text, facts),
            None => text,
        };
        if !rendered.contains(&text) {
            rendered.push(text);
        }
    }
    rendered.join("; ")
}

/// Replaces each `{a.b.c}` with the fact at that path; unknown names are left as written.
fn fill(template: &str, facts: &serde_json::Value) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        let (before, after) = rest.split_at(start);
        out.push_str(before);
        let Some(end) = after.find('}') else {
            out.push_str(after);
            return out;
        };
        let name = after.get(1..end).unwrap_or("");
        match lookup(facts, name) {
            Some(value) => out.push_str(&value),
            None => out.push_str(after.get(..=end).unwrap_or("")),
        }
        rest = after.get(end + 1..).unwrap_or("");
    }
    out.push_str(rest);
    out
}

fn lookup(facts: &serde_json::Value, name: &str) -> Option<String> {
    let mut value = facts;
    for part in name.split('.') {
        value = value.get(part)?;
    }
    match value {
        serde_json::Value::String(text) => Some(text.clone()),
        serde_json::Value::Number(number) => Some(number.to_string()),
        serde_json::Value::Bool(flag) => Some(flag.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::fill;

    #[test]
    fn fills_known_facts_and_keeps_unknown_names() {
        let facts = serde_json::json!({"design": {"operation": "write_files"}, "n": 3});
        assert_eq!(
            fill("Design {design.operation} writes", &facts),
            "Design write_files writes"
        );
        assert_eq!(
            fill("{n} and {missing.name}", &facts),
            "3 and {missing.name}"
        );
        assert_eq!(fill("open { brace", &facts), "open { brace");
    }
}
