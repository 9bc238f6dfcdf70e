//! analysis::wellformed::targets: the facts of one target path as `paths::target_facts`
//! derives them from the raw path — `path` is normalized (no empty or `.` segments, no
//! backslash), `lowercase` is it lowercased, `segments` are its segments folded (lowercased,
//! trimmed), `normalizes` fails for a parent segment or NUL — tied together where Cedar can
//! say it: for every string the policies look for in `segments`, when it is there and when it
//! cannot be.

use super::{implies, one_of, parse_all, patterns, Literals};
use crate::analysis::environments::Environment;
use crate::analysis::expr::{self, Expr, Pattern};
use crate::analysis::AnalysisError;
use crate::facts::design::WORKSPACE;
use crate::paths::{is_js_whitespace, rejected_character};

pub(super) fn condition(
    environment: &Environment,
    literals: &Literals,
) -> Result<Expr, AnalysisError> {
    let operations: &[&str] = if environment.action == "delete_target" {
        &["delete_files"]
    } else {
        &["write_files", "create_support_js"]
    };
    let mut parts = vec![
        one_of("context.operation", operations),
        r#"(context.path == "") == (context.lowercase == "")"#.to_string(),
        r#"(context.path == "") == context.segments.isEmpty()"#.to_string(),
        implies(
            r#"context.path == """#,
            r#"!context.normalizes && !context.default_ignorable && context.skeleton == "" && context.skeleton_segments.isEmpty()"#,
        ),
    ];
    parts.push(if environment.resource == "DesignWorkspace" {
        format!(r#"context.project_id == "" && resource == DesignWorkspace::"{WORKSPACE}""#)
    } else {
        r#"context.project_id != """#.to_string()
    });
    let mut condition = parse_all(&parts)?;
    for attribute in ["path", "lowercase"] {
        condition = expr::and(condition, normalized(attribute));
    }
    condition = expr::and(condition, parents());
    condition = expr::and(condition, rejected());
    for letter in 'A'..='Z' {
        let upper = letter.to_string();
        let pattern = [Pattern::Any, Pattern::Text(&upper), Pattern::Any];
        condition = expr::and(
            condition,
            expr::not(expr::like(expr::context(&["lowercase"]), &pattern)),
        );
    }
    for literal in &literals.segments {
        condition = expr::and(condition, segment(literal));
    }
    // Untied, a `lowercase` the policies match is still one a call produces (the path written
    // in lower case); the ties matter, and cost solver time, only when a policy reads the path.
    if !literals.path_patterns.is_empty() || !literals.paths.is_empty() {
        condition = expr::and(
            condition,
            patterns::lowercase_ties(&literals.lowercase_patterns, &literals.path_patterns),
        );
    }
    for literal in &literals.paths {
        let lowered = literal.to_lowercase();
        let path_is = expr::eq(expr::context(&["path"]), expr::string(literal));
        let lowercase_is = expr::eq(expr::context(&["lowercase"]), expr::string(&lowered));
        condition = expr::and(condition, expr::or(expr::not(path_is), lowercase_is));
    }
    for literal in literals
        .lowercase
        .iter()
        .filter(|text| text.to_lowercase() != **text)
    {
        let never = expr::not(expr::eq(
            expr::context(&["lowercase"]),
            expr::string(literal),
        ));
        condition = expr::and(condition, never);
    }
    if environment.resource != "DesignWorkspace" {
        for id in &literals.projects {
            condition = expr::and(condition, project_is(id)?);
        }
    }
    Ok(condition)
}

fn project_is(id: &str) -> Result<Expr, AnalysisError> {
    Ok(expr::eq(
        expr::eq(expr::resource(), expr::entity("DesignProject", id)?),
        expr::eq(expr::context(&["project_id"]), expr::string(id)),
    ))
}

/// `paths::normalize`'s output: no empty segment, no `.` segment, no backslash.
fn normalized(attribute: &str) -> Expr {
    use Pattern::{Any, Text};
    let value = || expr::context(&[attribute]);
    let never: [&[Pattern<'_>]; 8] = [
        &[Any, Text("//"), Any],
        &[Text("/"), Any],
        &[Any, Text("/")],
        &[Text(".")],
        &[Text("./"), Any],
        &[Any, Text("/./"), Any],
        &[Any, Text("/.")],
        &[Any, Text("\\"), Any],
    ];
    expr::all(
        never
            .iter()
            .map(|pattern| expr::not(expr::like(value(), pattern))),
    )
}

/// A parent segment (`..`) or NUL keeps a path from normalizing.
fn parents() -> Expr {
    use Pattern::{Any, Text};
    let path = || expr::context(&["path"]);
    let climbs: [&[Pattern<'_>]; 5] = [
        &[Text("..")],
        &[Text("../"), Any],
        &[Any, Text("/..")],
        &[Any, Text("/../"), Any],
        &[Any, Text("\0"), Any],
    ];
    let climbing = expr::any(climbs.iter().map(|pattern| expr::like(path(), pattern)));
    expr::or(
        expr::not(climbing),
        expr::not(expr::context(&["normalizes"])),
    )
}

/// `paths::rejected_character` of an ASCII path: a rejected ASCII character anywhere (the
/// normalized, lowercased path keeps every such character of the raw one) is one.
fn rejected() -> Expr {
    let listed: Vec<String> = (0u8..128)
        .map(char::from)
        .filter(|c| rejected_character(&c.to_string()).is_some())
        .map(String::from)
        .collect();
    let found = expr::any(listed.iter().map(|c| {
        expr::like(
            expr::context(&["lowercase"]),
            &[Pattern::Any, Pattern::Text(c), Pattern::Any],
        )
    }));
    expr::implies(found, expr::context(&["rejected_character"]))
}

/// What `segments.contains(literal)` means for `lowercase`: a segment of it folds to the
/// literal, so the literal is somewhere in it; a segment that is exactly the literal is one.
/// A literal no folded segment can be (upper case, a slash, padding) is never there.
fn segment(literal: &str) -> Expr {
    use Pattern::{Any, Text};
    let contains =
        |attribute: &str| expr::contains(expr::context(&[attribute]), expr::string(literal));
    let folded = literal
        .trim_end_matches(|c: char| c == '.' || is_js_whitespace(c))
        .trim_start_matches(is_js_whitespace);
    if literal.is_empty()
        || literal.contains('/')
        || folded != literal
        || literal.to_lowercase() != literal
    {
        return expr::not(contains("segments"));
    }
    let lowercase = || expr::context(&["lowercase"]);
    let within = expr::like(lowercase(), &[Any, Text(literal), Any]);
    let whole = expr::any([
        expr::eq(lowercase(), expr::string(literal)),
        expr::like(lowercase(), &[Text(literal), Text("/"), Any]),
        expr::like(lowercase(), &[Any, Text("/"), Text(literal)]),
        expr::like(
            lowercase(),
            &[Any, Text("/"), Text(literal), Text("/"), Any],
        ),
    ]);
    expr::and(
        expr::or(expr::not(contains("segments")), within),
        expr::or(expr::not(whole), contains("segments")),
    )
}
