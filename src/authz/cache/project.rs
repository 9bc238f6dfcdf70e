//! authz::project: a request context as Cedar sees it, cut down to what a slice reads
//! (`authz::reads`). One walk over the typed context gives both halves of a lookup: the
//! cache key (an exact, self-delimiting encoding of every value read) and, on a miss, the
//! Cedar record of the same values.
//!
//! INVARIANT: for one slice (a fixed `Tree`), `project` writes equal bytes only for contexts
//! whose `projected` Cedar records are equal, except in values read only through probes:
//! both read the same fields of the same values in the same order, and every value is
//! encoded with its length or count. A probed value is written as its probes' outcomes
//! (one byte each, a fixed number per slice) and given to Cedar whole; contexts that differ
//! only there get the same answer (`authz::probes`' invariant). An attribute's Rust type is
//! fixed, so for one slice it is always written the same way (outcomes or whole).

use std::collections::BTreeSet;

use cedar_policy::RestrictedExpression;

use super::probes::Probes;
use super::reads::Tree;
use crate::authz::EvaluationError;
use crate::paths::PathSet;

/// The bytes of a cache key.
#[derive(Debug, Default, Clone, PartialEq, Eq, Hash)]
pub struct Key(Vec<u8>);

impl Key {
    pub fn with_capacity(bytes: usize) -> Self {
        Self(Vec::with_capacity(bytes))
    }

    pub fn text(&mut self, text: &str) {
        self.count(text.len());
        self.0.extend_from_slice(text.as_bytes());
    }

    pub fn flag(&mut self, flag: bool) {
        self.0.push(u8::from(flag));
    }

    pub fn long(&mut self, long: i64) {
        self.0.extend_from_slice(&long.to_le_bytes());
    }

    pub fn count(&mut self, count: usize) {
        self.0
            .extend_from_slice(&u64::try_from(count).unwrap_or(u64::MAX).to_le_bytes());
    }

    /// An attribute read but absent (or tested only for presence, and present).
    pub fn absent(&mut self) {
        self.0.push(0xfe);
    }

    pub fn present(&mut self) {
        self.0.push(0xfd);
    }

    /// A value written as its probes' outcomes.
    pub fn probed(&mut self) {
        self.0.push(0xfc);
    }

    pub fn bytes(&self) -> &[u8] {
        &self.0
    }

    pub fn into_bytes(self) -> Box<[u8]> {
        self.0.into_boxed_slice()
    }
}

/// A value of a request context, encoded for the key and converted for Cedar.
pub(crate) trait Fact {
    fn to_cedar(&self) -> Result<RestrictedExpression, EvaluationError>;

    /// Writes the whole value.
    fn encode(&self, key: &mut Key);

    /// Writes the parts `tree` reads: a value that is not a record is read whole, or by its
    /// probes' outcomes when each of them applies to it.
    fn project(&self, tree: &Tree, key: &mut Key) {
        match tree {
            Tree::Present => key.present(),
            // Read only through the slice's relations (written after the tree).
            Tree::Probed(probes) if probes.is_empty() => key.probed(),
            Tree::Probed(probes) => {
                if !self.probe(probes, key) {
                    self.encode(key);
                }
            }
            _ => self.encode(key),
        }
    }

    /// Writes what determines `probes`' outcomes on this value, if they all apply to its
    /// type (and nothing, returning false, if not).
    fn probe(&self, _probes: &Probes, _key: &mut Key) -> bool {
        false
    }

    /// The Cedar value of the parts `tree` reads.
    fn projected(&self, _tree: &Tree) -> Result<RestrictedExpression, EvaluationError> {
        self.to_cedar()
    }

    /// A record's attribute (`None` for values that are not records).
    fn field(&self, _name: &str) -> Option<&dyn Fact> {
        None
    }

    /// A string, Long or Bool as text (`None` for sets and records).
    fn text(&self) -> Option<String> {
        None
    }

    /// A Long's value (`None` for any other value).
    fn long(&self) -> Option<i64> {
        None
    }

    /// A string's value (`None` for any other value).
    fn string(&self) -> Option<&str> {
        None
    }

    /// A set of strings' members, sorted, each once (`None` for any other value).
    fn members(&self) -> Option<Vec<&str>> {
        None
    }
}

/// The value at `path` (attribute names from the root) in a record, if there is one.
pub(crate) fn value_at<'a, R: Attributes>(record: &'a R, path: &[String]) -> Option<&'a dyn Fact> {
    let (first, rest) = path.split_first()?;
    let mut value: &dyn Fact = record.attribute(first)?;
    for name in rest {
        value = value.field(name)?;
    }
    Some(value)
}

impl Fact for String {
    fn to_cedar(&self) -> Result<RestrictedExpression, EvaluationError> {
        Ok(RestrictedExpression::new_string(self.clone()))
    }

    fn encode(&self, key: &mut Key) {
        key.text(self);
    }

    /// The constant it equals (if any) and each pattern's match.
    fn probe(&self, probes: &Probes, key: &mut Key) -> bool {
        if !probes.on_texts() {
            return false;
        }
        key.probed();
        let equal = probes.equals.contains(self);
        key.flag(equal);
        if equal {
            key.text(self);
        }
        probes
            .likes
            .iter()
            .for_each(|glob| key.flag(glob.matches(self)));
        true
    }

    fn text(&self) -> Option<String> {
        Some(self.clone())
    }

    fn string(&self) -> Option<&str> {
        Some(self)
    }
}

impl Fact for bool {
    fn to_cedar(&self) -> Result<RestrictedExpression, EvaluationError> {
        Ok(RestrictedExpression::new_bool(*self))
    }

    fn encode(&self, key: &mut Key) {
        key.flag(*self);
    }

    fn text(&self) -> Option<String> {
        Some(self.to_string())
    }
}

impl Fact for i64 {
    fn to_cedar(&self) -> Result<RestrictedExpression, EvaluationError> {
        Ok(RestrictedExpression::new_long(*self))
    }

    fn long(&self) -> Option<i64> {
        Some(*self)
    }

    fn encode(&self, key: &mut Key) {
        key.long(*self);
    }

    fn text(&self) -> Option<String> {
        Some(self.to_string())
    }
}

/// Sets of strings: a `BTreeSet`, a `PathSet`, and a list kept without duplicates (a `Vec`,
/// whose order is the key's, not Cedar's).
macro_rules! impl_string_set_fact {
    ($($type:ty),+) => {$(
        impl Fact for $type {
            fn to_cedar(&self) -> Result<RestrictedExpression, EvaluationError> {
                Ok(string_set(self.iter()))
            }

            fn encode(&self, key: &mut Key) {
                encode_strings(self.iter(), self.len(), key);
            }

            fn probe(&self, probes: &Probes, key: &mut Key) -> bool {
                probe_members(self.iter(), probes, key)
            }

            fn members(&self) -> Option<Vec<&str>> {
                let mut members: Vec<&str> = self.iter().map(String::as_str).collect();
                members.sort_unstable();
                members.dedup();
                Some(members)
            }
        }
    )+};
}

impl_string_set_fact!(BTreeSet<String>, PathSet, Vec<String>);

/// A record: its attribute names, in the order a whole record is encoded, and each value.
pub(crate) trait Attributes {
    const NAMES: &'static [&'static str];

    fn attribute(&self, name: &str) -> Option<&dyn Fact>;
}

pub(crate) fn record_to_cedar<R: Attributes>(
    record: &R,
) -> Result<RestrictedExpression, EvaluationError> {
    self::record(record_pairs(record, &Tree::Whole)?)
}

pub(crate) fn record_encode<R: Attributes>(record: &R, key: &mut Key) {
    for name in R::NAMES {
        match record.attribute(name) {
            Some(value) => value.encode(key),
            None => key.absent(),
        }
    }
}

pub(crate) fn record_project<R: Attributes>(record: &R, tree: &Tree, key: &mut Key) {
    let Tree::Fields(fields) = tree else {
        if *tree == Tree::Present {
            return key.present();
        }
        return record_encode(record, key);
    };
    for (name, tree) in fields {
        match record.attribute(name) {
            Some(value) => value.project(tree, key),
            None => key.absent(),
        }
    }
}

/// The `(name, value)` pairs of the attributes `tree` reads (every attribute for a whole or
/// presence read).
pub(crate) fn record_pairs<R: Attributes>(
    record: &R,
    tree: &Tree,
) -> Result<Vec<(String, RestrictedExpression)>, EvaluationError> {
    let Tree::Fields(fields) = tree else {
        let mut pairs = Vec::with_capacity(R::NAMES.len());
        for name in R::NAMES {
            if let Some(value) = record.attribute(name) {
                pairs.push(((*name).to_string(), value.to_cedar()?));
            }
        }
        return Ok(pairs);
    };
    let mut pairs = Vec::with_capacity(fields.len());
    for (name, tree) in fields {
        if let Some(value) = record.attribute(name) {
            pairs.push((name.clone(), value.projected(tree)?));
        }
    }
    Ok(pairs)
}

fn string_set<'a>(strings: impl Iterator<Item = &'a String>) -> RestrictedExpression {
    RestrictedExpression::new_set(
        strings.map(|text| RestrictedExpression::new_string(text.clone())),
    )
}

/// A set's probed members, in order: they determine every `contains` outcome.
fn probe_members<'a>(
    members: impl Iterator<Item = &'a String>,
    probes: &Probes,
    key: &mut Key,
) -> bool {
    if !probes.on_sets() {
        return false;
    }
    let mut probed: Vec<&String> = members
        .filter(|member| probes.members.contains(*member))
        .collect();
    probed.sort_unstable();
    probed.dedup();
    key.probed();
    let count = probed.len();
    encode_strings(probed.into_iter(), count, key);
    true
}

fn encode_strings<'a>(strings: impl Iterator<Item = &'a String>, count: usize, key: &mut Key) {
    key.count(count);
    strings.for_each(|text| key.text(text));
}

/// Builds a Cedar record from `(name, value)` pairs.
pub(crate) fn record(
    pairs: Vec<(String, RestrictedExpression)>,
) -> Result<RestrictedExpression, EvaluationError> {
    RestrictedExpression::new_record(pairs)
        .map_err(|error| EvaluationError::Context(error.to_string()))
}

/// `impl_fact!(Type; field, field, ...)`: a record type whose attributes are the named fields,
/// in that order.
macro_rules! impl_fact {
    ($type:ty; $($field:ident),+ $(,)?) => {
        impl $crate::authz::cache::project::Attributes for $type {
            const NAMES: &'static [&'static str] = &[$(stringify!($field)),+];

            fn attribute(&self, name: &str) -> Option<&dyn $crate::authz::cache::project::Fact> {
                match name {
                    $(stringify!($field) => Some(&self.$field),)+
                    _ => None,
                }
            }
        }

        impl $crate::authz::cache::project::Fact for $type {
            fn to_cedar(&self) -> Result<cedar_policy::RestrictedExpression, $crate::authz::EvaluationError> {
                $crate::authz::cache::project::record_to_cedar(self)
            }

            fn encode(&self, key: &mut $crate::authz::cache::project::Key) {
                $crate::authz::cache::project::record_encode(self, key)
            }

            fn project(&self, tree: &$crate::authz::cache::reads::Tree, key: &mut $crate::authz::cache::project::Key) {
                $crate::authz::cache::project::record_project(self, tree, key)
            }

            fn projected(&self, tree: &$crate::authz::cache::reads::Tree) -> Result<cedar_policy::RestrictedExpression, $crate::authz::EvaluationError> {
                $crate::authz::cache::project::record($crate::authz::cache::project::record_pairs(self, tree)?)
            }

            fn field(&self, name: &str) -> Option<&dyn $crate::authz::cache::project::Fact> {
                $crate::authz::cache::project::Attributes::attribute(self, name)
            }
        }
    };
}

pub(crate) use impl_fact;

/// A Cedar context from a record's `(name, value)` pairs.
pub(crate) fn cedar_context<R: Attributes>(
    record: &R,
    tree: &Tree,
) -> Result<cedar_policy::Context, EvaluationError> {
    cedar_policy::Context::from_pairs(record_pairs(record, tree)?)
        .map_err(|error| EvaluationError::Context(error.to_string()))
}

#[cfg(test)]
#[path = "project_tests.rs"]
mod tests;
