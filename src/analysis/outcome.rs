//! analysis::outcome: askgate's answer of one policy set in one request environment as a
//! Cedar expression over the request, so that the solver compares answers, not Cedar's
//! Allow/Deny. For a call it is `decide`'s tri-state written out: a hard forbid denies; else,
//! when `@ask` forbids apply, the call asks for the first of their kinds (consent, grant,
//! plan, batch) if the second question (`approved`) allows, and denies if not; else a permit
//! allows. For a target path it is ordinary (allow) or blocked (deny). The value is the
//! answer's number (`Answer::code`).
//!
//! Two things `decide` does are not written here: an evaluation error denies (the expression
//! errs instead, so the solver does not propose such a request; `validate --analyze` reports
//! policies that can err), and the second question reads only the asked kinds' approvals
//! (`approved`). Every request the solver proposes is decided by `decide` before it is shown.

use cedar_policy::{Effect, Policy};
use cedar_policy_core::ast::{ExprKind, UnaryOp};

use super::answer::Answer;
use super::approved::{approved, contains_literal, reads, Asked};
use super::environments::{reaches, Environment};
use super::expr::{self, Expr};
use crate::authz::{ApprovalKind, PolicySnapshot};

/// One policy of the set as the outcome reads it.
struct Rule {
    effect: Effect,
    ask: Option<ApprovalKind>,
    holds: Expr,
    /// An `@ask(kind)` forbid lifted by `context.approvals.contains(kind)` (an alternative of
    /// a negated part of its condition: an `unless`) and reading approvals nowhere else: it
    /// never applies on the second question (if it applied, its kind was asked), so the second
    /// question may leave it out.
    lifted_by_its_kind: bool,
}

fn rules(snapshot: &PolicySnapshot, environment: &Environment) -> Vec<Rule> {
    snapshot
        .policies()
        .policies()
        .filter(|policy| reaches(policy, environment, snapshot.action_entities()))
        .map(|policy| {
            let ask = snapshot.meta(policy.id()).and_then(|meta| meta.ask);
            let holds = expr::holds(policy);
            let lifted_by_its_kind = ask.is_some_and(|kind| lifted_by(&holds, kind));
            Rule {
                effect: policy.effect(),
                ask,
                holds,
                lifted_by_its_kind,
            }
        })
        .collect()
}

/// What a policy is compared by between two sides: its `@ask` annotation and its text.
pub fn key(policy: &Policy) -> String {
    format!("{:?}\n{policy}", policy.annotation("ask"))
}

/// For each approval kind an `@ask` forbid of the rules names, "one of them applies".
fn asked(rules: &[Rule]) -> Asked {
    let mut asked = Asked::new();
    for kind in [
        ApprovalKind::Consent,
        ApprovalKind::Grant,
        ApprovalKind::Plan,
        ApprovalKind::Batch,
    ] {
        let applies = expr::any(
            rules
                .iter()
                .filter(|rule| rule.effect == Effect::Forbid && rule.ask == Some(kind))
                .map(|rule| rule.holds.clone()),
        );
        if expr::constant(&applies) != Some(false) {
            asked.insert(kind, applies);
        }
    }
    asked
}

/// Whether `holds` reads approvals once, as an alternative of a negated conjunct:
/// `… && !(… || context.approvals.contains(kind) || …)`.
fn lifted_by(holds: &Expr, kind: ApprovalKind) -> bool {
    reads(holds) == 1
        && parts(holds, true)
            .into_iter()
            .any(|part| match part.expr_kind() {
                ExprKind::UnaryApp {
                    op: UnaryOp::Not,
                    arg,
                } => parts(arg, false)
                    .into_iter()
                    .any(|alternative| contains_literal(alternative) == Some(kind.as_str())),
                _ => false,
            })
}

/// The top-level conjuncts (`conjunction`) or alternatives of `expr`.
fn parts(expr: &Expr, conjunction: bool) -> Vec<&Expr> {
    match (expr.expr_kind(), conjunction) {
        (ExprKind::And { left, right }, true) | (ExprKind::Or { left, right }, false) => {
            let mut found = parts(left, conjunction);
            found.extend(parts(right, conjunction));
            found
        }
        _ => vec![expr],
    }
}

/// The answer's number.
fn code(answer: Answer) -> Expr {
    expr::long(answer.code())
}

/// The answer `snapshot` gives a request of the (call) `environment`, as its number.
pub fn call_outcome(snapshot: &PolicySnapshot, environment: &Environment) -> Expr {
    let rules = rules(snapshot, environment);
    let any = |keep: &dyn Fn(&Rule) -> bool| {
        expr::any(rules.iter().filter(|r| keep(r)).map(|r| r.holds.clone()))
    };
    let hard = any(&|rule| rule.effect == Effect::Forbid && rule.ask.is_none());
    let asked = asked(&rules);
    let permitted = any(&|rule| rule.effect == Effect::Permit);
    let second_permits = expr::any(
        rules
            .iter()
            .filter(|rule| rule.effect == Effect::Permit)
            .map(|rule| approved(&rule.holds, &asked)),
    );
    // Hard forbids that read no approvals are false wherever this is asked (they are checked
    // first); an ask forbid that is not lifted by its own kind may still stop the approval.
    let second_forbids = expr::any(
        rules
            .iter()
            .filter(|rule| rule.effect == Effect::Forbid && !rule.lifted_by_its_kind)
            .filter(|rule| rule.ask.is_some() || reads(&rule.holds) > 0)
            .map(|rule| approved(&rule.holds, &asked)),
    );
    let any_ask = expr::any(asked.values().cloned());
    let ask = expr::ite(
        expr::and(second_permits, expr::not(second_forbids)),
        ask_code(&asked, environment),
        code(Answer::Deny),
    );
    expr::ite(
        hard,
        code(Answer::Deny),
        expr::ite(
            any_ask,
            ask,
            expr::ite(permitted, code(Answer::Allow), code(Answer::Deny)),
        ),
    )
}

/// The ask's kind: the first asked (consent, grant, plan, batch). A grant card needs the
/// project's verified identity; without it `decide` denies.
fn ask_code(asked: &Asked, environment: &Environment) -> Expr {
    let grant_card = if environment.resource == "AttachedProject" {
        expr::truth(false)
    } else {
        expr::context(&["design", "identity_verified"])
    };
    asked
        .iter()
        .rev()
        .fold(code(Answer::Deny), |otherwise, (kind, applies)| {
            let answer = match kind {
                ApprovalKind::Grant => expr::ite(
                    grant_card.clone(),
                    code(Answer::Ask(*kind)),
                    code(Answer::Deny),
                ),
                _ => code(Answer::Ask(*kind)),
            };
            expr::ite(applies.clone(), answer, otherwise)
        })
}

/// Whether `snapshot` classifies a target of the (target) `environment` as ordinary (allow)
/// or blocked (deny), as its number.
pub fn target_outcome(snapshot: &PolicySnapshot, environment: &Environment) -> Expr {
    let rules = rules(snapshot, environment);
    let of = |effect: Effect| {
        expr::any(
            rules
                .iter()
                .filter(|r| r.effect == effect)
                .map(|r| r.holds.clone()),
        )
    };
    expr::ite(
        expr::and(of(Effect::Permit), expr::not(of(Effect::Forbid))),
        code(Answer::Allow),
        code(Answer::Deny),
    )
}

/// The answer of `snapshot` in `environment`, whichever kind of environment it is.
pub fn outcome(snapshot: &PolicySnapshot, environment: &Environment) -> Expr {
    if environment.is_target() {
        target_outcome(snapshot, environment)
    } else {
        call_outcome(snapshot, environment)
    }
}
