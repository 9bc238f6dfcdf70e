//! authz::reason: turns the determining policies into ids and a human reason. `@reason` text
//! may name facts as `{design.operation}`; they are filled from the request context.

use std::collections::BTreeSet;

use cedar_policy::PolicyId;

use super::cache::project::{Attributes, Fact};
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
    let mut rendered: Vec<String> = Vec::with_capacity(texts.len());
    for (_, text) in texts {
        let text = if text.contains('{') {
            fill(&text, context)
        } else {
            text
        };
        if !rendered.contains(&text) {
            rendered.push(text);
        }
    }
    rendered.join("; ")
}

/// Replaces each `{a.b.c}` with the fact at that path (a string, number or Bool); other and
/// unknown names are left as written.
fn fill<R: Attributes>(template: &str, facts: &R) -> String {
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

fn lookup<R: Attributes>(facts: &R, name: &str) -> Option<String> {
    let mut parts = name.split('.');
    let mut value: &dyn Fact = facts.attribute(parts.next()?)?;
    for part in parts {
        value = value.field(part)?;
    }
    value.text()
}

#[cfg(test)]
mod tests {
    use super::fill;
    use crate::authz::context::SessionContext;

    #[test]
    fn fills_known_facts_and_keeps_unknown_names() {
        let session = SessionContext {
            agent: "main".to_string(),
            agent_id: "a-1".to_string(),
            mode: "plan".to_string(),
            interactive: true,
            permission_hook: false,
            bypass_available: false,
            bypass: false,
            may_record: true,
            attestation: "none".to_string(),
            attestation_required: false,
        };
        assert_eq!(
            fill("{agent} in {mode} mode ({interactive})", &session),
            "main in plan mode (true)"
        );
        assert_eq!(
            fill("{agent} and {missing.name}", &session),
            "main and {missing.name}"
        );
        assert_eq!(fill("open { brace", &session), "open { brace");
    }
}
