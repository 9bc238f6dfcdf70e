//! analysis::wellformed: which requests a real call can produce, as one Cedar condition per
//! request environment. The solver may propose only requests it holds for, so every derived
//! fact is tied to its definition: `bypass` and `may_record` and the operation hints are
//! written from the code that derives them (their truth tables, `session`), the target
//! verdicts each operation can have from the target enumeration (`design`), the rest beside
//! the code that gathers it (`projects`, `targets`, the entity ids). A test samples real calls
//! and checks each satisfies its environment's condition, so the two cannot drift apart.
//!
//! Every part must hold for every call askgate can gather (else a widening could be missed);
//! what Cedar cannot say (a path list's length, a segment's case folding of any path) is left
//! to the scenario check of each counterexample (`render`).

mod design;
mod patterns;
mod projects;
mod session;
mod targets;

use std::collections::BTreeSet;

use cedar_policy_core::ast::{BinaryOp, ExprKind, Literal};

use super::environments::Environment;
use super::expr::{self, Expr};
use super::AnalysisError;
use crate::authz::PolicySnapshot;
use patterns::LikePattern;

/// The last millisecond a scenario's RFC 3339 time can name (year 9999).
pub const MAX_NOW: i64 = 253_402_300_799_999;

/// Literals the policies compare request attributes with, so that the facts derived from the
/// same source can be tied to them (an entity id and the fact it comes from).
#[derive(Debug, Clone, Default)]
pub struct Literals {
    /// `Agent::"…"` ids.
    pub agents: BTreeSet<String>,
    /// `DesignProject::"…"` ids.
    pub projects: BTreeSet<String>,
    /// Strings a policy looks for in `context.segments` or `context.skeleton_segments`.
    pub segments: BTreeSet<String>,
    /// Strings a policy compares `context.path` with.
    pub paths: BTreeSet<String>,
    /// Strings a policy compares `context.lowercase` with.
    pub lowercase: BTreeSet<String>,
    /// `like` patterns a policy matches `context.lowercase` with (target requests).
    pub lowercase_patterns: BTreeSet<LikePattern>,
    /// `like` patterns a policy matches `context.path` with (target requests).
    pub path_patterns: BTreeSet<LikePattern>,
    /// `like` patterns a policy matches `context.projects.resolved_path` with.
    pub resolved_patterns: BTreeSet<LikePattern>,
}

impl Literals {
    /// The literals of every policy of `snapshots`.
    pub fn of(snapshots: &[&PolicySnapshot]) -> Self {
        let mut literals = Self::default();
        for snapshot in snapshots {
            for policy in snapshot.policies().policies() {
                literals.collect(&expr::holds(policy));
            }
        }
        literals
    }

    fn collect(&mut self, condition: &Expr) {
        for node in condition.subexpressions() {
            if let ExprKind::Lit(Literal::EntityUID(uid)) = node.expr_kind() {
                let id = AsRef::<str>::as_ref(uid.eid()).to_string();
                match uid.entity_type().to_string().as_str() {
                    "Agent" => self.agents.insert(id),
                    "DesignProject" => self.projects.insert(id),
                    _ => false,
                };
            }
            for attribute in ["segments", "skeleton_segments"] {
                if let Some(text) = expr::compared(node, BinaryOp::Contains, attribute) {
                    self.segments.insert(text.to_string());
                }
            }
            if let Some(text) = expr::compared(node, BinaryOp::Eq, "path") {
                self.paths.insert(text.to_string());
            }
            if let Some(text) = expr::compared(node, BinaryOp::Eq, "lowercase") {
                self.lowercase.insert(text.to_string());
            }
            if let ExprKind::Like {
                expr: value,
                pattern,
            } = node.expr_kind()
            {
                let found = patterns::of(pattern.get_elems());
                if expr::is_context(value, &["lowercase"]) {
                    self.lowercase_patterns.insert(found);
                } else if expr::is_context(value, &["path"]) {
                    self.path_patterns.insert(found);
                } else if expr::is_context(value, &["projects", "resolved_path"]) {
                    self.resolved_patterns.insert(found);
                }
            }
        }
    }
}

/// Which approvals a request may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approvals {
    /// None: the first question's request, the one the solver proposes for `diff`.
    None,
    /// Any of the approval kinds: either question's request (`validate --analyze`).
    Any,
}

/// The condition every request of `environment` that a real call produces satisfies.
pub fn condition(
    environment: &Environment,
    literals: &Literals,
    approvals: Approvals,
) -> Result<Expr, AnalysisError> {
    if environment.is_target() {
        return targets::condition(environment, literals);
    }
    let surface = if environment.resource == "AttachedProject" {
        projects::condition(&environment.action, literals)?
    } else {
        design::condition(environment, literals)?
    };
    Ok(expr::and(session::condition(literals, approvals)?, surface))
}

/// `(!(a) || (b))` in Cedar syntax.
fn implies(condition: &str, then: &str) -> String {
    format!("(!({condition}) || ({then}))")
}

/// `[…].contains(attribute)` in Cedar syntax.
fn one_of<S: AsRef<str>>(attribute: &str, values: &[S]) -> String {
    let quoted: Vec<String> = values
        .iter()
        .map(|value| format!("{:?}", value.as_ref()))
        .collect();
    format!("[{}].contains({attribute})", quoted.join(", "))
}

/// Every part, parsed and joined by `&&`.
fn parse_all(parts: &[String]) -> Result<Expr, AnalysisError> {
    parts
        .iter()
        .map(|part| expr::parse(part))
        .try_fold(expr::truth(true), |whole, part| Ok(expr::and(whole, part?)))
}

#[cfg(test)]
#[path = "wellformed/tests.rs"]
mod tests;
