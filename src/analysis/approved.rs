//! analysis::approved: a policy's condition as it reads on `decide`'s second question, asked of
//! the same request. The solver's request has `context.approvals` empty (the first question's
//! context); the second question's context differs only in `approvals`, which `decide` fills
//! with the kinds the `@ask` forbids that stopped the first question name. So every read of
//! `context.approvals` is replaced by what it is there: `contains("k")` by "an `@ask("k")`
//! forbid applies", `isEmpty()` by false (an ask always names a kind), any other read by the
//! set itself, built from the same facts. It rewrites expressions only.

use std::collections::BTreeMap;

use cedar_policy_core::ast::{BinaryOp, ExprKind, UnaryOp};

use super::expr::{self, Expr};
use crate::authz::ApprovalKind;

/// For each approval kind, the expression "an `@ask(kind)` forbid applies" on the request.
pub type Asked = BTreeMap<ApprovalKind, Expr>;

fn is_approvals(expr: &Expr) -> bool {
    expr::is_context(expr, &["approvals"])
}

/// How many times `condition` reads `context.approvals`.
pub fn reads(condition: &Expr) -> usize {
    condition
        .subexpressions()
        .filter(|node| is_approvals(node))
        .count()
}

/// `Some("k")` when `condition` is `context.approvals.contains("k")`.
pub fn contains_literal(condition: &Expr) -> Option<&str> {
    match condition.expr_kind() {
        ExprKind::BinaryApp {
            op: BinaryOp::Contains,
            arg1,
            arg2,
        } if is_approvals(arg1) => expr::text(arg2),
        _ => None,
    }
}

/// `condition` as it evaluates on the second question's context.
pub fn approved(condition: &Expr, asked: &Asked) -> Expr {
    expr::rewrite(condition, &|node| {
        if let Some(kind) = contains_literal(node) {
            let applies = kind
                .parse::<ApprovalKind>()
                .ok()
                .and_then(|kind| asked.get(&kind));
            return Some(applies.cloned().unwrap_or_else(|| expr::truth(false)));
        }
        match node.expr_kind() {
            ExprKind::UnaryApp {
                op: UnaryOp::IsEmpty,
                arg,
            } if is_approvals(arg) => Some(expr::truth(false)),
            _ if is_approvals(node) => Some(approvals_set(asked)),
            _ => None,
        }
    })
}

/// The approvals set itself: the kinds whose `@ask` forbids apply (a nested choice over the
/// kinds; the branch with none cannot be reached and reads as every kind).
fn approvals_set(asked: &Asked) -> Expr {
    fn build(kinds: &[(&ApprovalKind, &Expr)], chosen: &mut Vec<ApprovalKind>) -> Expr {
        let Some(((kind, applies), rest)) = kinds.split_first() else {
            let named = if chosen.is_empty() {
                vec![
                    ApprovalKind::Consent,
                    ApprovalKind::Grant,
                    ApprovalKind::Plan,
                    ApprovalKind::Batch,
                ]
            } else {
                chosen.clone()
            };
            return expr::set(named.iter().map(|kind| expr::string(kind.as_str())));
        };
        chosen.push(**kind);
        let with = build(rest, chosen);
        chosen.pop();
        let without = build(rest, chosen);
        expr::ite((*applies).clone(), with, without)
    }
    let kinds: Vec<(&ApprovalKind, &Expr)> = asked.iter().collect();
    build(&kinds, &mut Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approval_reads_become_what_the_second_question_sees() {
        let batch = expr::context(&["session", "interactive"]);
        let asked = Asked::from([(ApprovalKind::Batch, batch)]);
        let lifted =
            expr::parse(r#"!context.approvals.contains("batch") && context.now > 1"#).unwrap();
        let second = approved(&lifted, &asked);
        assert_eq!(reads(&second), 0);
        assert!(second.to_string().contains("interactive"), "{second}");
        let empty = expr::parse("!context.approvals.isEmpty()").unwrap();
        assert_eq!(expr::constant(&approved(&empty, &asked)), Some(true));
        let other = expr::parse(r#"context.approvals.contains("plan")"#).unwrap();
        assert_eq!(expr::constant(&approved(&other, &asked)), Some(false));
        let whole = expr::parse(r#"context.approvals.containsAll(["batch"])"#).unwrap();
        assert_eq!(reads(&approved(&whole, &asked)), 0);
    }
}
