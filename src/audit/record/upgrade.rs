//! audit::record::upgrade: completes the request context of a record written before a fact
//! existed, so old logs keep decoding and replaying (the compatibility rule in the README).
//! Each fact added to the context after format 1 gets one entry in [`ADDED`]: where it sits and
//! how to compute it from what an old record holds (a derived fact) or the value that means
//! what the code did before the fact existed. A present field is never touched. It must not
//! read files, clocks or the network.

use serde_json::{Map, Value};

/// Computes an added fact from the record's context as logged.
type Fill = fn(&Map<String, Value>) -> Value;

/// The facts added to the context since format 1 was first written, by path within the
/// context (`["session", "bypass"]`). None yet: format 1 is today's context.
const ADDED: &[(&[&str], Fill)] = &[];

/// Fills every fact of [`ADDED`] the context lacks (none of a present one is touched).
pub fn complete_context(context: &mut Map<String, Value>) {
    complete(context, ADDED);
}

fn complete(context: &mut Map<String, Value>, added: &[(&[&str], Fill)]) {
    for (path, fill) in added {
        let Some((field, parents)) = path.split_last() else {
            continue;
        };
        if lookup(context, parents).is_some_and(|parent| !parent.contains_key(*field)) {
            let value = fill(context);
            if let Some(parent) = lookup_mut(context, parents) {
                parent.insert((*field).to_string(), value);
            }
        }
    }
}

/// The object at `path` (the context itself for an empty path); `None` when the record has no
/// such object (a Projects record has no `design`: its facts are not added there).
fn lookup<'a>(context: &'a Map<String, Value>, path: &[&str]) -> Option<&'a Map<String, Value>> {
    path.iter()
        .try_fold(context, |object, key| object.get(*key)?.as_object())
}

fn lookup_mut<'a>(
    context: &'a mut Map<String, Value>,
    path: &[&str],
) -> Option<&'a mut Map<String, Value>> {
    path.iter()
        .try_fold(context, |object, key| object.get_mut(*key)?.as_object_mut())
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::indexing_slicing,
        clippy::panic
    )]

    use serde_json::json;

    use super::*;

    fn bypass(context: &Map<String, Value>) -> Value {
        let mode = context["session"]["mode"].as_str().unwrap_or("");
        Value::Bool(mode == "bypassPermissions")
    }

    fn never(_: &Map<String, Value>) -> Value {
        Value::Bool(false)
    }

    const EXAMPLE: &[(&[&str], Fill)] = &[
        (&["session", "bypass"], bypass),
        (&["design", "targets", "skeleton_reserved"], never),
    ];

    #[test]
    fn a_missing_fact_is_derived_and_a_present_one_kept() {
        let mut old = json!({"session": {"mode": "bypassPermissions"}, "projects": {}});
        let old = old.as_object_mut().unwrap();
        complete(old, EXAMPLE);
        assert_eq!(
            Value::Object(old.clone()),
            json!({"session": {"mode": "bypassPermissions", "bypass": true}, "projects": {}}),
            "a Projects record gets no design facts"
        );
        let mut new = json!({"session": {"mode": "default", "bypass": true}});
        let new = new.as_object_mut().unwrap();
        complete(new, EXAMPLE);
        assert_eq!(
            new["session"]["bypass"], true,
            "a logged fact is never replaced"
        );
        let mut design = json!({"session": {"mode": "default"}, "design": {"targets": {}}});
        let design = design.as_object_mut().unwrap();
        complete(design, EXAMPLE);
        assert_eq!(design["design"]["targets"]["skeleton_reserved"], false);
        assert_eq!(design["session"]["bypass"], false);
    }
}
