//! authz::relations: a policy's comparisons of two context values with each other —
//! `context.a == context.b` (or `!=`), `<`, `<=`, `>`, `>=`, and `a.contains(b)`,
//! `a.containsAll(b)`, `a.containsAny(b)` — read from its JSON form (EST), and their
//! outcomes on a request.
//!
//! When every read of an attribute in a slice is such a relation (or a probe,
//! `authz::probes`), the policies see the value only through those outcomes, so the answer
//! cache keys the request by the outcomes rather than by the values (`reads::Tree::Probed`
//! with the relations listed in `reads::Reads`). A plan-covered write then shares its answer
//! with every call whose plan has not expired and covers its targets, whatever the clock,
//! the expiry or the paths are.
//!
//! INVARIANT (exactness): an outcome is what Cedar computes for the expression on the two
//! values: Long order and equality, string equality, and set equality, containment and
//! overlap over sets of strings, all exact. A pair of values for which no outcome is
//! computed here (another type, an absent attribute) is written whole instead, so the key
//! stays exact for them.

use serde_json::Value;

use super::project::{value_at, Attributes, Fact, Key};

/// One comparison of two context attributes (paths from the root of the context).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Relation {
    pub operator: Operator,
    pub left: Vec<String>,
    pub right: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Operator {
    /// `==` and `!=` (one outcome decides both).
    Equals,
    Less,
    LessOrEqual,
    Greater,
    GreaterOrEqual,
    /// `left.contains(right)`: a set holds a value.
    Contains,
    /// `left.containsAll(right)`.
    ContainsAll,
    /// `left.containsAny(right)`.
    ContainsAny,
}

impl Operator {
    fn of(name: &str) -> Option<Self> {
        Some(match name {
            "==" | "!=" => Self::Equals,
            "<" => Self::Less,
            "<=" => Self::LessOrEqual,
            ">" => Self::Greater,
            ">=" => Self::GreaterOrEqual,
            "contains" => Self::Contains,
            "containsAll" => Self::ContainsAll,
            "containsAny" => Self::ContainsAny,
            _ => return None,
        })
    }
}

/// When `expression` compares two operands: the operator and the two operands.
pub fn relation_form(expression: &Value) -> Option<(Operator, &Value, &Value)> {
    let object = expression.as_object().filter(|object| object.len() == 1)?;
    let (name, operands) = object.iter().next()?;
    let operator = Operator::of(name)?;
    Some((operator, operands.get("left")?, operands.get("right")?))
}

impl Relation {
    /// Writes the outcome on `context`'s values, or both values whole when it has none.
    pub(crate) fn write<R: Attributes>(&self, context: &R, key: &mut Key) {
        let left = value_at(context, &self.left);
        let right = value_at(context, &self.right);
        if let (Some(left), Some(right)) = (left, right) {
            if let Some(outcome) = self.outcome(left, right) {
                return key.flag(outcome);
            }
        }
        key.absent();
        for value in [left, right] {
            match value {
                Some(value) => value.encode(key),
                None => key.absent(),
            }
        }
    }

    /// Cedar's outcome of the comparison on two values, when both have a type it is
    /// computed for here.
    fn outcome(&self, left: &dyn Fact, right: &dyn Fact) -> Option<bool> {
        let longs = || Some((left.long()?, right.long()?));
        let sets = || Some((left.members()?, right.members()?));
        match self.operator {
            Operator::Equals => {
                if let Some((left, right)) = longs() {
                    return Some(left == right);
                }
                if let (Some(left), Some(right)) = (left.string(), right.string()) {
                    return Some(left == right);
                }
                sets().map(|(left, right)| left == right)
            }
            Operator::Less => longs().map(|(left, right)| left < right),
            Operator::LessOrEqual => longs().map(|(left, right)| left <= right),
            Operator::Greater => longs().map(|(left, right)| left > right),
            Operator::GreaterOrEqual => longs().map(|(left, right)| left >= right),
            Operator::Contains => {
                let (set, member) = (left.members()?, right.string()?);
                Some(set.binary_search(&member).is_ok())
            }
            Operator::ContainsAll => sets().map(|(set, subset)| {
                subset
                    .iter()
                    .all(|member| set.binary_search(member).is_ok())
            }),
            Operator::ContainsAny => sets()
                .map(|(set, other)| other.iter().any(|member| set.binary_search(member).is_ok())),
        }
    }
}

#[cfg(test)]
#[path = "relations_tests.rs"]
mod tests;
