//! analysis::block: one proposed request as a Cedar condition that holds for exactly that
//! request (its principal, resource and every context attribute), so that asking again with
//! it negated makes the solver propose another. Empty sets are written `isEmpty()` (Cedar's
//! validator refuses an empty set literal).

use serde_json::Value;

use super::concrete::RawRequest;
use super::expr::{self, Expr};
use super::AnalysisError;

/// Holds for `request` and for no other request of its environment.
pub fn block(request: &RawRequest) -> Result<Expr, AnalysisError> {
    let mut parts = vec![
        expr::eq(
            expr::principal(),
            expr::entity(&request.principal.kind, &request.principal.id)?,
        ),
        expr::eq(
            expr::resource(),
            expr::entity(&request.resource.kind, &request.resource.id)?,
        ),
    ];
    leaves(&request.context, &mut Vec::new(), &mut parts);
    Ok(expr::all(parts))
}

fn leaves(value: &Value, path: &mut Vec<String>, parts: &mut Vec<Expr>) {
    let attribute = |path: &[String]| {
        let names: Vec<&str> = path.iter().map(String::as_str).collect();
        expr::context(&names)
    };
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                path.push(key.clone());
                leaves(child, path, parts);
                path.pop();
            }
        }
        Value::Array(items) if items.is_empty() => parts.push(expr::is_empty(attribute(path))),
        Value::Array(items) => {
            let items: Option<Vec<Expr>> = items.iter().map(literal).collect();
            // A set of anything but strings, numbers and flags is not in the schema; such a
            // request cannot be named, and blocking the rest of it is still a block of it.
            if let Some(items) = items {
                parts.push(expr::eq(attribute(path), expr::set(items)));
            }
        }
        other => parts.extend(literal(other).map(|value| expr::eq(attribute(path), value))),
    }
}

fn literal(value: &Value) -> Option<Expr> {
    match value {
        Value::String(text) => Some(expr::string(text)),
        Value::Bool(flag) => Some(expr::truth(*flag)),
        Value::Number(number) => number.as_i64().map(expr::long),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authz::EntityRef;

    #[test]
    fn a_blocked_request_is_named_leaf_by_leaf() {
        let request = RawRequest {
            principal: EntityRef::new("Agent", "main"),
            action: "project_read".to_string(),
            resource: EntityRef::new("AttachedProject", "p"),
            context: serde_json::json!({"approvals": [], "now": 5, "session": {"mode": "plan"}, "x": ["a"]}),
        };
        let text = expr::question("q", block(&request).unwrap())
            .unwrap()
            .to_string();
        for part in [
            "isEmpty()",
            "== 5",
            r#"== "plan""#,
            r#"== ["a"]"#,
            r#"Agent::"main""#,
        ] {
            assert!(text.contains(part), "{part} in {text}");
        }
    }
}
