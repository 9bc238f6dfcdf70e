//! analysis::probe: concrete requests built from a change's own literals, tried when the
//! solver's proposals stop showing anything new (issue 38 §2). The solver may keep proposing
//! requests whose path facts disagree in ways no call produces (a `lowercase` that is not the
//! path lowercased); a change between a derived fact and the raw one (`lowercase like "*.pem"`
//! → `path like "*.pem"`, a dropped `resolved_path` test) is then shown by a path built from
//! the changed rule's own patterns, written the ways real calls write paths (as given, upper
//! case, `./` before it, one folder down). Each probe is the solver's last proposal with its
//! path and every fact derived from it replaced by the real derivations, so what is decided is
//! a request a real call produces.

use std::collections::BTreeSet;

use cedar_policy_core::ast::{ExprKind, Literal, PatternElem};
use serde_json::Value;

use super::concrete::RawRequest;
use super::environments::Environment;
use super::expr::{self, Expr};
use crate::authz::context::TargetContext;
use crate::authz::PolicySnapshot;
use crate::call::ProjectsMethod;
use crate::facts::projects::resolve_write;
use crate::paths::target_facts;

/// At most this many path literals are taken from a change (each gives a few probes).
const MAX_LITERALS: usize = 64;

/// The paths to probe with: each string a changed policy matches a path with (`like`
/// patterns with their wildcards filled, `==` literals), in the ways real calls write it.
pub fn paths(before: &PolicySnapshot, after: &PolicySnapshot) -> Vec<String> {
    let texts = |snapshot: &PolicySnapshot| -> BTreeSet<String> {
        snapshot
            .policies()
            .policies()
            .map(ToString::to_string)
            .collect()
    };
    let (before_texts, after_texts) = (texts(before), texts(after));
    let mut literals = BTreeSet::new();
    for (snapshot, other) in [(before, &after_texts), (after, &before_texts)] {
        for policy in snapshot.policies().policies() {
            if other.contains(&policy.to_string()) {
                continue;
            }
            collect(&expr::holds(policy), &mut literals);
        }
    }
    let mut probes = BTreeSet::new();
    for literal in literals.into_iter().take(MAX_LITERALS) {
        let literal = literal.trim_start_matches('/').to_string();
        if literal.is_empty() {
            continue;
        }
        for written in [
            literal.clone(),
            literal.to_uppercase(),
            format!("./{literal}"),
            format!("./{}", literal.to_uppercase()),
            format!("a/{literal}"),
        ] {
            probes.insert(written);
        }
    }
    probes.into_iter().collect()
}

/// The strings `condition` matches a string with: `like` patterns, each wildcard filled
/// with `a`, and string literals compared with `==`.
fn collect(condition: &Expr, out: &mut BTreeSet<String>) {
    for node in condition.subexpressions() {
        match node.expr_kind() {
            ExprKind::Like { pattern, .. } => {
                let text: String = pattern
                    .iter()
                    .map(|element| match element {
                        PatternElem::Char(c) => *c,
                        PatternElem::Wildcard => 'a',
                    })
                    .collect();
                out.insert(text);
            }
            ExprKind::BinaryApp { arg1, arg2, .. } => {
                for arg in [arg1, arg2] {
                    if let ExprKind::Lit(Literal::String(text)) = arg.expr_kind() {
                        if text.contains('.') || text.contains('/') {
                            out.insert(text.to_string());
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

/// `last` (the solver's last proposal in `environment`) with its path set to `path` and the
/// facts derived from the path derived as a call derives them; `None` when the environment
/// has no path (its requests are not probed).
pub fn request(environment: &Environment, last: &RawRequest, path: &str) -> Option<RawRequest> {
    let mut probe = last.clone();
    if environment.is_target() {
        let text = |key: &str| {
            last.context
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let context =
            TargetContext::of(&target_facts(path), &text("project_id"), &text("operation"));
        probe.context = serde_json::to_value(context).ok()?;
        return Some(probe);
    }
    let projects = probe.context.get_mut("projects")?.as_object_mut()?;
    let method = ProjectsMethod::from_name(projects.get("method")?.as_str()?)?;
    if projects.get("path")?.as_str()?.is_empty() {
        return None;
    }
    projects.insert("path".into(), Value::from(path));
    let resolved = if method == ProjectsMethod::ProjectWrite {
        resolve_write(path, None)
    } else {
        String::new()
    };
    projects.insert("resolved_path".into(), Value::from(resolved));
    Some(probe)
}
