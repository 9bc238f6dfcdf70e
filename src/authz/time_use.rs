//! authz::time_use: how a policy reads the clock (`context.now`), found by walking its Cedar
//! JSON form at load. It lets a remembered answer stay valid across time: when every read of
//! `now` is a plain comparison with a context attribute or a literal, the answer can only
//! change when `now` crosses one of those values.
//!
//! Conservative by construction: any other use of `now` (arithmetic, a bare `context`, an
//! unreadable policy) is `Opaque`, and an opaque answer is never remembered.

use std::collections::BTreeSet;

use cedar_policy::Policy;
use serde_json::{Map, Value};

/// A value `now` is compared with.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Threshold {
    Literal(i64),
    /// A context attribute path, without the leading `context`.
    Attribute(Vec<String>),
}

/// What a policy (or a slice of policies) reads of `context.now`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum TimeUse {
    /// Never reads `now`: its answers hold at any time.
    #[default]
    Never,
    /// Reads `now` only in comparisons with these values.
    Thresholds(BTreeSet<Threshold>),
    /// Reads `now` in a way this analysis does not follow.
    Opaque,
}

impl TimeUse {
    pub fn of(policy: &Policy) -> Self {
        let Ok(json) = policy.to_json() else {
            return Self::Opaque;
        };
        // Only conditions hold expressions; the scope and annotations cannot read `now`.
        let conditions = json.get("conditions").unwrap_or(&Value::Null);
        let mut thresholds = BTreeSet::new();
        match walk(conditions, &mut thresholds) {
            Err(Unfollowed) => Self::Opaque,
            Ok(()) if thresholds.is_empty() => Self::Never,
            Ok(()) => Self::Thresholds(thresholds),
        }
    }

    /// The use of a set of policies evaluated together.
    pub fn union(self, other: Self) -> Self {
        match (self, other) {
            (Self::Opaque, _) | (_, Self::Opaque) => Self::Opaque,
            (Self::Never, use_) | (use_, Self::Never) => use_,
            (Self::Thresholds(mut mine), Self::Thresholds(theirs)) => {
                mine.extend(theirs);
                Self::Thresholds(mine)
            }
        }
    }
}

/// A use of `now` the analysis does not follow.
struct Unfollowed;

const COMPARISONS: [&str; 6] = ["<", "<=", ">", ">=", "==", "!="];

fn walk(value: &Value, thresholds: &mut BTreeSet<Threshold>) -> Result<(), Unfollowed> {
    match value {
        Value::Array(items) => items.iter().try_for_each(|item| walk(item, thresholds)),
        Value::Object(object) => walk_object(object, thresholds),
        _ => Ok(()),
    }
}

fn walk_object(
    object: &Map<String, Value>,
    thresholds: &mut BTreeSet<Threshold>,
) -> Result<(), Unfollowed> {
    for (key, inner) in object {
        match key.as_str() {
            // Literals hold no expressions; a record's attribute names are not node kinds.
            "Value" => {}
            "Record" => walk_record(inner, thresholds)?,
            // A bare `context` could hand `now` to anything.
            "Var" if inner.as_str() == Some("context") => return Err(Unfollowed),
            "." => walk_access(inner, true, thresholds)?,
            "has" => walk_access(inner, false, thresholds)?,
            op if COMPARISONS.contains(&op) => walk_comparison(inner, thresholds)?,
            _ => walk(inner, thresholds)?,
        }
    }
    Ok(())
}

fn walk_record(record: &Value, thresholds: &mut BTreeSet<Threshold>) -> Result<(), Unfollowed> {
    let fields = record.as_object().ok_or(Unfollowed)?;
    fields
        .values()
        .try_for_each(|field| walk(field, thresholds))
}

/// `left.attr` (`reads`) or `left has attr`: reading any context attribute but `now` is
/// harmless; a read of `now` outside a comparison is not followed.
fn walk_access(
    access: &Value,
    reads: bool,
    thresholds: &mut BTreeSet<Threshold>,
) -> Result<(), Unfollowed> {
    let left = access.get("left").ok_or(Unfollowed)?;
    if is_context(left) {
        let attr = access.get("attr").and_then(Value::as_str);
        return match attr {
            Some("now") if reads => Err(Unfollowed),
            Some(_) => Ok(()),
            None => Err(Unfollowed),
        };
    }
    walk(left, thresholds)
}

fn walk_comparison(
    operands: &Value,
    thresholds: &mut BTreeSet<Threshold>,
) -> Result<(), Unfollowed> {
    let (Some(left), Some(right)) = (operands.get("left"), operands.get("right")) else {
        return Err(Unfollowed);
    };
    match (is_now(left), is_now(right)) {
        (true, true) => Ok(()),
        (true, false) => record(right, thresholds),
        (false, true) => record(left, thresholds),
        (false, false) => {
            walk(left, thresholds)?;
            walk(right, thresholds)
        }
    }
}

/// Records the value `now` is compared with, when it is a literal or a context attribute.
fn record(operand: &Value, thresholds: &mut BTreeSet<Threshold>) -> Result<(), Unfollowed> {
    if let Some(literal) = operand.get("Value").and_then(Value::as_i64) {
        thresholds.insert(Threshold::Literal(literal));
        return Ok(());
    }
    let path = context_path(operand).ok_or(Unfollowed)?;
    if path.first().map(String::as_str) == Some("now") {
        return Err(Unfollowed);
    }
    thresholds.insert(Threshold::Attribute(path));
    Ok(())
}

fn is_context(value: &Value) -> bool {
    value.get("Var").and_then(Value::as_str) == Some("context")
}

/// `context.now`, exactly.
fn is_now(value: &Value) -> bool {
    context_path(value).is_some_and(|path| path == ["now"])
}

/// `context.a.b.c` as `["a", "b", "c"]`, for a plain chain of attribute reads.
fn context_path(value: &Value) -> Option<Vec<String>> {
    let access = value.get(".")?;
    let attr = access.get("attr")?.as_str()?.to_string();
    let left = access.get("left")?;
    let mut path = if is_context(left) {
        Vec::new()
    } else {
        context_path(left)?
    };
    path.push(attr);
    Some(path)
}

#[cfg(test)]
#[path = "time_use_tests.rs"]
mod tests;
