//! authz::guards: a policy's guard, the Bool fact its condition tests first (`when {
//! context.design.tokenless && … }` or `when { !context.design.tokenless && … }`), read from
//! its JSON form. A request whose fact falsifies a policy's guard cannot satisfy that policy,
//! so the index leaves the policy out of the slice it evaluates for that request
//! (`index::Slice::part`): a tokenless write never evaluates the plan rules, and a slice
//! without them no longer reads the clock or the target paths.
//!
//! INVARIANT (exactness): Cedar evaluates a policy's scope (entity tests, which cannot err),
//! then its conditions in order, each `&&` left to right, stopping at the first false. A guard
//! is only the leftmost operand of the first `when` condition, so when its fact is false
//! (or true, for `!`), Cedar finds the policy unsatisfied without evaluating anything else:
//! no match and no error. Leaving it out changes no answer. A request lacking the fact is
//! evaluated on the whole slice.

use cedar_policy::Policy;
use serde_json::Value;

/// At most this many guard facts cut one slice (2^n parts).
const MAX_FACTS: usize = 2;

/// The fact a policy's condition tests first, and the value that lets it go on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guard {
    /// The attribute path under `context`.
    pub path: Vec<String>,
    /// The policy can only be satisfied when the fact has this value.
    pub needs: bool,
}

impl Guard {
    pub fn of(policy: &Policy) -> Option<Guard> {
        let est = policy.to_json().ok()?;
        let first = est.get("conditions")?.as_array()?.first()?;
        if first.get("kind")?.as_str()? != "when" {
            return None;
        }
        let mut leftmost = first.get("body")?;
        while let Some(left) = leftmost.get("&&").and_then(|and| and.get("left")) {
            leftmost = left;
        }
        if let Some(negated) = leftmost.get("!").and_then(|not| not.get("arg")) {
            return Some(Guard {
                path: context_path(negated)?,
                needs: false,
            });
        }
        Some(Guard {
            path: context_path(leftmost)?,
            needs: true,
        })
    }

    /// Whether the assignment `bits` of `facts` (bit k: fact k is true) falsifies this guard.
    pub fn falsified_by(&self, facts: &[Vec<String>], bits: usize) -> bool {
        facts
            .iter()
            .position(|fact| *fact == self.path)
            .is_some_and(|k| (bits >> k & 1 == 1) != self.needs)
    }
}

/// `context.a.b…` (at least one attribute) as `[a, b, …]`.
fn context_path(expression: &Value) -> Option<Vec<String>> {
    let access = expression
        .as_object()
        .filter(|object| object.len() == 1)?
        .get(".")?;
    let attribute = access.get("attr")?.as_str()?.to_string();
    let left = access.get("left")?;
    let mut path = if left.get("Var").and_then(Value::as_str) == Some("context") {
        Vec::new()
    } else {
        context_path(left)?
    };
    path.push(attribute);
    Some(path)
}

/// The guard facts that cut a slice of policies with these guards: the ones guarding the
/// most policies (at least two each), at most `MAX_FACTS`.
pub fn choose(guards: &[Option<&Guard>]) -> Vec<Vec<String>> {
    let mut counts: Vec<(Vec<String>, usize)> = Vec::new();
    for guard in guards.iter().flatten() {
        match counts.iter_mut().find(|(path, _)| *path == guard.path) {
            Some((_, count)) => *count += 1,
            None => counts.push((guard.path.clone(), 1)),
        }
    }
    counts.sort_by(|(a, many), (b, more)| more.cmp(many).then_with(|| a.cmp(b)));
    counts
        .into_iter()
        .filter(|(_, count)| *count >= 2)
        .take(MAX_FACTS)
        .map(|(path, _)| path)
        .collect()
}

#[cfg(test)]
#[path = "guards_tests.rs"]
mod tests;
