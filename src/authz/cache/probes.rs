//! authz::probes: a policy's comparisons of a context value with constants — `== "text"`,
//! `!= "text"`, `like "pattern"`, `.contains("text")`, and `.containsAll` / `.containsAny` of
//! a literal set of strings — read from its JSON form (EST), and their outcomes on a value.
//!
//! When every read of an attribute in a slice is such a probe, the policies see the value
//! only through the probes' outcomes, so the answer cache keys the attribute by those
//! outcomes rather than by the value (`reads::Tree::Probed`): 256 ordinary paths of a batch,
//! or a new path per call, share one answer as long as no probe tells them apart.
//!
//! INVARIANT (exactness): each outcome is what Cedar computes for that expression on the
//! value — string and set equality are exact, and `like` is matched by cedar-policy-core's
//! own `Pattern::wildcard_match`, the function its evaluator calls (the crate is pinned to
//! the engine's version), after checks that only turn away texts no match can be. None of these forms can err on a value of the type they apply to,
//! and a probe that does not apply to a value's type makes the value read whole. So two
//! values with equal outcomes make every expression of the slice evaluate alike.

use std::collections::BTreeSet;

use cedar_policy_core::ast::{Pattern, PatternElem};
use serde_json::Value;

/// One comparison of a value with a constant.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Probe {
    /// `value == "text"` (or `!=`): a string's equality.
    Equals(String),
    /// `value like pattern`: a string's match.
    Like(Glob),
    /// `value.contains("text")`, and each member of a literal `containsAll`/`containsAny`:
    /// a set's membership.
    Contains(String),
}

/// The probes of one attribute, by kind. Its key is written from them (`project::Fact`):
/// a string's equal constant (if any) and each pattern's match, or a set's probed members;
/// each determines every outcome of its kind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Probes {
    pub equals: BTreeSet<String>,
    pub likes: BTreeSet<Glob>,
    pub members: BTreeSet<String>,
}

impl Probes {
    pub fn insert(&mut self, probe: Probe) {
        match probe {
            Probe::Equals(constant) => self.equals.insert(constant),
            Probe::Like(glob) => self.likes.insert(glob),
            Probe::Contains(member) => self.members.insert(member),
        };
    }

    pub fn extend(&mut self, other: Probes) {
        self.equals.extend(other.equals);
        self.likes.extend(other.likes);
        self.members.extend(other.members);
    }

    pub fn is_empty(&self) -> bool {
        self.equals.is_empty() && self.likes.is_empty() && self.members.is_empty()
    }

    /// Every probe applies to strings.
    pub fn on_texts(&self) -> bool {
        self.members.is_empty()
    }

    /// Every probe applies to sets.
    pub fn on_sets(&self) -> bool {
        self.equals.is_empty() && self.likes.is_empty()
    }
}

impl FromIterator<Probe> for Probes {
    fn from_iter<I: IntoIterator<Item = Probe>>(probes: I) -> Self {
        let mut all = Probes::default();
        probes.into_iter().for_each(|probe| all.insert(probe));
        all
    }
}

/// When `expression` is a probe form: its other operand and its probes.
pub fn probe_form(expression: &Value) -> Option<(&Value, Vec<Probe>)> {
    let object = expression.as_object().filter(|object| object.len() == 1)?;
    let (operator, operands) = object.iter().next()?;
    let left = operands.get("left")?;
    match operator.as_str() {
        "==" | "!=" => {
            let right = operands.get("right")?;
            if let Some(text) = string_literal(right) {
                return Some((left, vec![Probe::Equals(text)]));
            }
            Some((right, vec![Probe::Equals(string_literal(left)?)]))
        }
        "like" => Some((left, vec![Probe::Like(pattern(operands.get("pattern")?)?)])),
        "contains" => Some((
            left,
            vec![Probe::Contains(string_literal(operands.get("right")?)?)],
        )),
        "containsAll" | "containsAny" => {
            let members = operands.get("right")?.get("Set")?.as_array()?;
            let probes = members
                .iter()
                .map(|member| string_literal(member).map(Probe::Contains))
                .collect::<Option<Vec<_>>>()?;
            Some((left, probes))
        }
        _ => None,
    }
}

/// A `like` pattern, with what any text it matches must have (to turn most texts away
/// without running the matcher).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Glob {
    pattern: Pattern,
    /// The literal characters before the first wildcard: a prefix of every match.
    prefix: String,
    /// The literal characters after the last wildcard: a suffix of every match.
    suffix: String,
    /// Every literal character (each once): each occurs in every match.
    characters: Vec<char>,
}

impl Glob {
    pub fn new(elements: Vec<PatternElem>) -> Self {
        let literal = |element: &PatternElem| match element {
            PatternElem::Char(character) => Some(*character),
            PatternElem::Wildcard => None,
        };
        let prefix = elements.iter().map_while(literal).collect();
        let mut suffix: Vec<char> = elements.iter().rev().map_while(literal).collect();
        suffix.reverse();
        let mut characters: Vec<char> = elements.iter().filter_map(literal).collect();
        characters.sort_unstable();
        characters.dedup();
        Self {
            pattern: Pattern::from(elements),
            prefix,
            suffix: suffix.into_iter().collect(),
            characters,
        }
    }

    /// Cedar's `text like pattern`. The checks before the matcher are necessary conditions
    /// of a match, so they only ever answer `false` where it would.
    pub fn matches(&self, text: &str) -> bool {
        let bytes = text.as_bytes();
        begins(bytes, self.prefix.as_bytes())
            && begins(bytes.iter().rev(), self.suffix.as_bytes().iter().rev())
            && self
                .characters
                .iter()
                .all(|&character| text.contains(character))
            && self.pattern.wildcard_match(text)
    }
}

/// Whether `text` begins with `prefix` (byte by byte: the affixes are short, most empty).
fn begins<'a>(
    text: impl IntoIterator<Item = &'a u8>,
    prefix: impl IntoIterator<Item = &'a u8>,
) -> bool {
    let mut text = text.into_iter();
    prefix
        .into_iter()
        .all(|expected| text.next() == Some(expected))
}

/// `{"Value": "text"}`: a string literal.
fn string_literal(expression: &Value) -> Option<String> {
    let object = expression.as_object().filter(|object| object.len() == 1)?;
    Some(object.get("Value")?.as_str()?.to_string())
}

/// An EST pattern (`[{"Literal": "ab"}, "Wildcard", …]`) as Cedar's own.
fn pattern(elements: &Value) -> Option<Glob> {
    let mut pattern = Vec::new();
    for element in elements.as_array()? {
        match element {
            Value::String(wildcard) if wildcard == "Wildcard" => {
                pattern.push(PatternElem::Wildcard);
            }
            Value::Object(literal) if literal.len() == 1 => {
                let text = literal.get("Literal")?.as_str()?;
                pattern.extend(text.chars().map(PatternElem::Char));
            }
            _ => return None,
        }
    }
    Some(Glob::new(pattern))
}

#[cfg(test)]
#[path = "probes_tests.rs"]
mod tests;
