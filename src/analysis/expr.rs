//! analysis::expr: Cedar expressions as Cedar's own syntax tree (`cedar_policy_core::ast`) —
//! what a policy's condition is as one expression (scope and `when`/`unless` together), the
//! builders the analysis composes its questions from (folding constants, so a rule that cannot
//! apply costs nothing, and joining long lists as balanced trees), a rewrite over every node,
//! and the one policy every question is asked as. Building on the tree, not on text or JSON,
//! keeps a question of tens of kilobytes cheap to make. It must not decide or solve.

use std::collections::BTreeMap;
use std::sync::Arc;

use cedar_policy::Policy;
use cedar_policy_core::ast::{
    self, Annotations, BinaryOp, EntityUID, ExprKind, ExprShapeOnly, Literal, PatternElem,
    PolicyID, StaticPolicy, UnaryOp, Var,
};

use super::AnalysisError;

/// A Cedar expression.
pub type Expr = ast::Expr;

pub fn truth(value: bool) -> Expr {
    Expr::val(value)
}

pub fn string(value: &str) -> Expr {
    Expr::val(value)
}

pub fn long(value: i64) -> Expr {
    Expr::val(value)
}

pub fn entity(kind: &str, id: &str) -> Result<Expr, AnalysisError> {
    let uid = EntityUID::with_eid_and_type(kind, id).map_err(|error| AnalysisError::Compile {
        action: kind.to_string(),
        message: error.to_string(),
    })?;
    Ok(Expr::val(uid))
}

pub fn principal() -> Expr {
    Expr::var(Var::Principal)
}

pub fn resource() -> Expr {
    Expr::var(Var::Resource)
}

/// `context.a.b…`
pub fn context(path: &[&str]) -> Expr {
    path.iter().fold(Expr::var(Var::Context), |left, attr| {
        Expr::get_attr(left, (*attr).into())
    })
}

/// Whether `expr` is `context.<path>` (any source location).
pub fn is_context(expr: &Expr, path: &[&str]) -> bool {
    let Some((last, parents)) = path.split_last() else {
        return matches!(expr.expr_kind(), ExprKind::Var(Var::Context));
    };
    match expr.expr_kind() {
        ExprKind::GetAttr { expr, attr } => attr == last && is_context(expr, parents),
        _ => false,
    }
}

/// The constant a boolean literal is.
pub fn constant(expr: &Expr) -> Option<bool> {
    match expr.expr_kind() {
        ExprKind::Lit(Literal::Bool(value)) => Some(*value),
        _ => None,
    }
}

/// The text a string literal is.
pub fn text(expr: &Expr) -> Option<&str> {
    match expr.expr_kind() {
        ExprKind::Lit(Literal::String(text)) => Some(text.as_str()),
        _ => None,
    }
}

pub fn not(arg: Expr) -> Expr {
    match constant(&arg) {
        Some(value) => truth(!value),
        None => Expr::not(arg),
    }
}

pub fn and(left: Expr, right: Expr) -> Expr {
    match (constant(&left), constant(&right)) {
        (Some(false), _) | (_, Some(false)) => truth(false),
        (Some(true), _) => right,
        (_, Some(true)) => left,
        _ => Expr::and(left, right),
    }
}

pub fn or(left: Expr, right: Expr) -> Expr {
    match (constant(&left), constant(&right)) {
        (Some(true), _) | (_, Some(true)) => truth(true),
        (Some(false), _) => right,
        (_, Some(false)) => left,
        _ => Expr::or(left, right),
    }
}

/// `!a || b`
pub fn implies(condition: Expr, then: Expr) -> Expr {
    or(not(condition), then)
}

/// Every part, joined by `&&` as a balanced tree (a long chain would nest as deep as it is
/// long, and the compiler recurses on depth).
pub fn all(parts: impl IntoIterator<Item = Expr>) -> Expr {
    balanced(parts.into_iter().collect(), true)
}

/// Any part, joined by `||` as a balanced tree.
pub fn any(parts: impl IntoIterator<Item = Expr>) -> Expr {
    balanced(parts.into_iter().collect(), false)
}

/// `parts` joined by `&&` (`conjunction`) or `||`, constants folded first.
fn balanced(parts: Vec<Expr>, conjunction: bool) -> Expr {
    let mut kept = Vec::with_capacity(parts.len());
    for part in parts {
        match constant(&part) {
            Some(value) if value == conjunction => {}
            Some(_) => return truth(!conjunction),
            None => kept.push(part),
        }
    }
    let join = if conjunction { and } else { or };
    while kept.len() > 1 {
        let mut next = Vec::with_capacity(kept.len().div_ceil(2));
        let mut pairs = kept.into_iter();
        while let Some(left) = pairs.next() {
            next.push(match pairs.next() {
                Some(right) => join(left, right),
                None => left,
            });
        }
        kept = next;
    }
    kept.pop().unwrap_or_else(|| truth(conjunction))
}

pub fn ite(condition: Expr, then: Expr, otherwise: Expr) -> Expr {
    match constant(&condition) {
        Some(true) => then,
        Some(false) => otherwise,
        None if ExprShapeOnly::new_from_borrowed(&then)
            == ExprShapeOnly::new_from_borrowed(&otherwise) =>
        {
            then
        }
        None => Expr::ite(condition, then, otherwise),
    }
}

pub fn eq(left: Expr, right: Expr) -> Expr {
    Expr::is_eq(left, right)
}

pub fn set(items: impl IntoIterator<Item = Expr>) -> Expr {
    Expr::set(items)
}

pub fn contains(collection: Expr, item: Expr) -> Expr {
    Expr::contains(collection, item)
}

/// `{before: …, after: …}`.
pub fn pair(before: Expr, after: Expr) -> Expr {
    let fields = BTreeMap::from([("before".into(), before), ("after".into(), after)]);
    Expr::record_arc(Arc::new(fields))
}

pub fn is_empty(collection: Expr) -> Expr {
    Expr::is_empty(collection)
}

/// One piece of a `like` pattern.
pub enum Pattern<'a> {
    Text(&'a str),
    Any,
}

/// `left like <pattern>` (the pattern given piece by piece, so no escaping is needed).
pub fn like(left: Expr, pattern: &[Pattern<'_>]) -> Expr {
    let elements: Vec<PatternElem> = pattern
        .iter()
        .flat_map(|piece| match piece {
            Pattern::Text(text) => text.chars().map(PatternElem::Char).collect::<Vec<_>>(),
            Pattern::Any => vec![PatternElem::Wildcard],
        })
        .collect();
    Expr::like(left, elements.into())
}

/// `left like <pattern>`, each element a character or a wildcard (`None`).
pub fn like_chars(left: Expr, pattern: &[Option<char>]) -> Expr {
    let elements: Vec<PatternElem> = pattern
        .iter()
        .map(|element| element.map_or(PatternElem::Wildcard, PatternElem::Char))
        .collect();
    Expr::like(left, elements.into())
}

/// Whether `policy` applies to a request: its scope and conditions as one expression.
pub fn holds(policy: &Policy) -> Expr {
    let policy: &ast::Policy = policy.as_ref();
    policy.condition()
}

/// `expr` with every node `replace` answers for replaced (children first otherwise), the
/// connectives folded again.
pub fn rewrite(expr: &Expr, replace: &dyn Fn(&Expr) -> Option<Expr>) -> Expr {
    if let Some(replaced) = replace(expr) {
        return replaced;
    }
    let again = |child: &Arc<Expr>| rewrite(child, replace);
    match expr.expr_kind() {
        ExprKind::If {
            test_expr,
            then_expr,
            else_expr,
        } => ite(again(test_expr), again(then_expr), again(else_expr)),
        ExprKind::And { left, right } => and(again(left), again(right)),
        ExprKind::Or { left, right } => or(again(left), again(right)),
        ExprKind::UnaryApp {
            op: UnaryOp::Not,
            arg,
        } => not(again(arg)),
        ExprKind::UnaryApp { op, arg } => Expr::unary_app(*op, again(arg)),
        ExprKind::BinaryApp { op, arg1, arg2 } => Expr::binary_app(*op, again(arg1), again(arg2)),
        ExprKind::ExtensionFunctionApp { fn_name, args } => Expr::call_extension_fn(
            fn_name.clone(),
            args.iter().map(|arg| rewrite(arg, replace)).collect(),
        ),
        ExprKind::GetAttr { expr, attr } => Expr::get_attr(again(expr), attr.clone()),
        ExprKind::HasAttr { expr, attr } => Expr::has_attr(again(expr), attr.clone()),
        ExprKind::ExtHasAttr { expr, attrs } => Expr::extended_has_attr(again(expr), attrs.clone()),
        ExprKind::Like { expr, pattern } => Expr::like(again(expr), pattern.clone()),
        ExprKind::Is { expr, entity_type } => {
            Expr::is_entity_type(again(expr), entity_type.clone())
        }
        ExprKind::Set(items) => Expr::set(items.iter().map(|item| rewrite(item, replace))),
        ExprKind::Record(fields) => {
            let fields: BTreeMap<_, _> = fields
                .iter()
                .map(|(name, value)| (name.clone(), rewrite(value, replace)))
                .collect();
            Expr::record_arc(Arc::new(fields))
        }
        _ => expr.clone(),
    }
}

/// The string a binary `op` node compares `context.<attribute>` with, if it is one.
pub fn compared<'a>(node: &'a Expr, op: BinaryOp, attribute: &str) -> Option<&'a str> {
    let ExprKind::BinaryApp {
        op: found,
        arg1,
        arg2,
    } = node.expr_kind()
    else {
        return None;
    };
    if *found != op {
        return None;
    }
    if is_context(arg1, &[attribute]) {
        text(arg2)
    } else if is_context(arg2, &[attribute]) && op == BinaryOp::Eq {
        text(arg1)
    } else {
        None
    }
}

/// A condition written in Cedar syntax, for the parts the analysis writes as text.
pub fn parse(text: &str) -> Result<Expr, AnalysisError> {
    let source = format!("permit (principal, action, resource) when {{ {text} }};");
    let policy = Policy::parse(None, source).map_err(|error| AnalysisError::Compile {
        action: "analysis".to_string(),
        message: format!("{error}: {text}"),
    })?;
    Ok(holds(&policy))
}

/// The question asked of the solver: a permit that matches exactly the requests `body` holds for.
pub fn question(id: &str, body: Expr) -> Result<Policy, AnalysisError> {
    let policy = StaticPolicy::new(
        PolicyID::from_string(id),
        None,
        Annotations::new(),
        ast::Effect::Permit,
        ast::PrincipalConstraint::any(),
        ast::ActionConstraint::any(),
        ast::ResourceConstraint::any(),
        Some(body),
    )
    .map_err(|error| AnalysisError::Compile {
        action: id.to_string(),
        message: error.to_string(),
    })?;
    Ok(Policy::from(policy))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_policy_reads_as_its_scope_and_conditions() {
        let policy = Policy::parse(
            None,
            r#"forbid (principal == Agent::"x", action in [Action::"a", Action::"b"], resource is DesignProject)
               when { context.now > 3 } unless { context.approvals.contains("batch") };"#,
        )
        .unwrap();
        let text = question("q", holds(&policy)).unwrap().to_string();
        for part in [
            r#"principal == Agent::"x""#,
            r#"Action::"a""#,
            "resource is DesignProject",
            r#"context["approvals"].contains("batch")"#,
        ] {
            let text = text.replace(".approvals", "[\"approvals\"]");
            assert!(text.contains(part), "{part} in {text}");
        }
    }

    #[test]
    fn constants_fold_and_lists_balance() {
        let unknown = context(&["now"]);
        let shape = |expr: &Expr| expr.to_string();
        assert_eq!(shape(&and(truth(true), unknown.clone())), shape(&unknown));
        assert_eq!(constant(&or(unknown.clone(), truth(true))), Some(true));
        assert_eq!(constant(&not(truth(false))), Some(true));
        assert_eq!(shape(&ite(truth(false), long(1), long(2))), "2");
        assert_eq!(constant(&all([])), Some(true));
        assert_eq!(constant(&any([])), Some(false));
        let many = all((0..64).map(|n| eq(context(&["now"]), long(n))));
        assert!(shape(&many).matches("&&").count() == 63);
        assert!(is_context(
            &context(&["design", "plan"]),
            &["design", "plan"]
        ));
    }
}
