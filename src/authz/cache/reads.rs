//! authz::reads: which parts of a request a policy can read, derived from its text when the
//! snapshot is built. A slice's reads are the union of its policies' reads; the answer cache
//! (`authz::cache`) keys a request by exactly those parts, and the request Cedar evaluates
//! holds exactly those parts (`authz::project`).
//!
//! INVARIANT (soundness): evaluating a policy touches only the parts of the request listed
//! here. The analysis walks the policy's JSON form (EST) and is conservative where it cannot
//! see: a `context` it cannot follow through a chain of constant attribute accesses is read
//! whole, and any use of `principal` or `resource` beyond an unconstrained scope reads the
//! entity. An attribute used only in comparisons with constants is read through those
//! probes (`authz::probes`, whose invariant makes their outcomes exact). Should it still miss a part, the projected request lacks that attribute and Cedar
//! reports an evaluation error, which denies: a miss fails closed, never open.

use std::collections::{BTreeMap, BTreeSet};

use cedar_policy::Policy;
use serde_json::Value;

use super::probes::{probe_form, Probes};
use super::relations::{relation_form, Relation};

/// What one policy (or a slice of policies) reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reads {
    /// The principal entity is read (its uid: there is no entity data besides actions).
    pub principal: bool,
    /// The resource entity is read.
    pub resource: bool,
    pub context: Tree,
    /// Comparisons of two context attributes with each other; both attributes are marked
    /// in `context` as probed (their outcome is the key's, `authz::relations`).
    pub relations: BTreeSet<Relation>,
}

/// The parts of a record that are read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tree {
    /// The whole value.
    Whole,
    /// Only whether the attribute exists (`has`).
    Present,
    /// Only through these comparisons with constants, and the slice's relations.
    Probed(Probes),
    /// These attributes of a record (none: nothing is read).
    Fields(BTreeMap<String, Tree>),
}

impl Default for Tree {
    fn default() -> Self {
        Self::Fields(BTreeMap::new())
    }
}

impl Tree {
    pub fn union(self, other: Tree) -> Tree {
        match (self, other) {
            (Tree::Whole, _) | (_, Tree::Whole) => Tree::Whole,
            (Tree::Present, tree) | (tree, Tree::Present) => tree.at_least_present(),
            (Tree::Probed(mut mine), Tree::Probed(theirs)) => {
                mine.extend(theirs);
                Tree::Probed(mine)
            }
            // A value both probed and read as a record: read it whole.
            (Tree::Probed(probes), Tree::Fields(fields))
            | (Tree::Fields(fields), Tree::Probed(probes)) => match fields.is_empty() {
                true => Tree::Probed(probes),
                false => Tree::Whole,
            },
            (Tree::Fields(mut mine), Tree::Fields(theirs)) => {
                for (name, tree) in theirs {
                    let merged = match mine.remove(&name) {
                        Some(known) => known.union(tree),
                        None => tree,
                    };
                    mine.insert(name, merged);
                }
                Tree::Fields(mine)
            }
        }
    }

    /// A `Fields` read alongside a presence test: reading attributes implies presence.
    fn at_least_present(self) -> Tree {
        match self {
            Tree::Fields(fields) if fields.is_empty() => Tree::Present,
            tree => tree,
        }
    }

    /// Marks `path` (attribute names from the root) as read, as `leaf`.
    fn insert(&mut self, path: &[String], leaf: Tree) {
        let Some((first, rest)) = path.split_first() else {
            let me = std::mem::take(self);
            *self = me.union(leaf);
            return;
        };
        match self {
            Tree::Whole => {}
            // Attributes of a probed value: read it whole.
            Tree::Probed(_) => *self = Tree::Whole,
            Tree::Present => {
                let mut fields = Tree::default();
                fields.insert(path, leaf);
                *self = fields;
            }
            Tree::Fields(fields) => fields.entry(first.clone()).or_default().insert(rest, leaf),
        }
    }

    pub fn is_empty(&self) -> bool {
        matches!(self, Tree::Fields(fields) if fields.is_empty())
    }
}

impl Reads {
    /// Everything: for a policy whose form cannot be read.
    pub fn everything() -> Self {
        Self {
            principal: true,
            resource: true,
            context: Tree::Whole,
            relations: BTreeSet::new(),
        }
    }

    pub fn of(policy: &Policy) -> Self {
        let Ok(est) = policy.to_json() else {
            return Self::everything();
        };
        let mut reads = Self {
            principal: constrained(est.get("principal")),
            resource: constrained(est.get("resource")),
            context: Tree::default(),
            relations: BTreeSet::new(),
        };
        if let Some(conditions) = est.get("conditions") {
            walk(conditions, &mut reads);
        }
        reads
    }

    pub fn union(self, other: Reads) -> Reads {
        Reads {
            principal: self.principal || other.principal,
            resource: self.resource || other.resource,
            context: self.context.union(other.context),
            relations: self.relations.union(&other.relations).cloned().collect(),
        }
    }
}

/// A scope constraint other than `All` reads the entity (`==`, `in`, `is`).
fn constrained(scope: Option<&Value>) -> bool {
    scope
        .and_then(|scope| scope.get("op"))
        .and_then(Value::as_str)
        != Some("All")
}

/// Records every variable use in `expression`.
fn walk(expression: &Value, reads: &mut Reads) {
    if let Some((operator, left, right)) = relation_form(expression) {
        if let (Some(left), Some(right)) = (context_attribute(left), context_attribute(right)) {
            for path in [&left, &right] {
                reads.context.insert(path, Tree::Probed(Probes::default()));
            }
            reads.relations.insert(Relation {
                operator,
                left,
                right,
            });
            return;
        }
    }
    if let Some((operand, probes)) = probe_form(expression) {
        if let Some(("context", path, Tree::Whole)) = chain(operand) {
            let probes = Tree::Probed(probes.into_iter().collect());
            reads.context.insert(&path, probes);
            return;
        }
    }
    if let Some((variable, path, leaf)) = chain(expression) {
        read(variable, &path, leaf, reads);
        return;
    }
    match expression {
        Value::Object(object) => {
            if object.contains_key("Value") {
                return; // a literal reads nothing
            }
            object.values().for_each(|child| walk(child, reads));
        }
        Value::Array(items) => items.iter().for_each(|child| walk(child, reads)),
        _ => {}
    }
}

/// A variable followed by constant attribute accesses (`context.a.b`, `context.a has b`): the
/// variable, the attribute path and how the last step reads it.
fn chain(expression: &Value) -> Option<(&str, Vec<String>, Tree)> {
    let object = expression.as_object()?;
    if object.len() != 1 {
        return None;
    }
    if let Some(variable) = object.get("Var") {
        return Some((variable.as_str()?, Vec::new(), Tree::Whole));
    }
    if let Some(access) = object.get(".") {
        let (variable, mut path, _) = chain(access.get("left")?)?;
        path.push(access.get("attr")?.as_str()?.to_string());
        return Some((variable, path, Tree::Whole));
    }
    let test = object.get("has")?;
    let (variable, mut path, _) = chain(test.get("left")?)?;
    match test.get("attr")? {
        Value::String(attribute) => path.push(attribute.clone()),
        Value::Array(attributes) => {
            for attribute in attributes {
                path.push(attribute.as_str()?.to_string());
            }
        }
        _ => return None,
    }
    Some((variable, path, Tree::Present))
}

/// `context.a.b…` (at least one attribute, no presence test) as `[a, b, …]`.
fn context_attribute(expression: &Value) -> Option<Vec<String>> {
    match chain(expression)? {
        ("context", path, Tree::Whole) if !path.is_empty() => Some(path),
        _ => None,
    }
}

fn read(variable: &str, path: &[String], leaf: Tree, reads: &mut Reads) {
    match variable {
        "context" => reads.context.insert(path, leaf),
        "principal" => reads.principal = true,
        "resource" => reads.resource = true,
        // The action is part of every key.
        _ => {}
    }
}

#[cfg(test)]
#[path = "reads_tests.rs"]
mod tests;
