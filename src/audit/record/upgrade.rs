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
/// context (`["session", "bypass"]`).
const ADDED: &[(&[&str], Fill)] = &[
    (&["session", "bypass"], session_bypass),
    (&["session", "may_record"], session_may_record),
    (&["projects", "detail_known"], projects_detail_known),
    (&["projects", "local_path_place"], projects_local_path_place),
    (&["design", "plan_registrable"], design_plan_registrable),
    (&["caller"], caller_unrestricted),
];

fn text<'a>(object: Option<&'a Value>, key: &str) -> &'a str {
    object
        .and_then(|object| object.get(key))
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn flag(object: Option<&Value>, key: &str) -> bool {
    object
        .and_then(|object| object.get(key))
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// `session.bypass`, as `facts::Session::bypass` derives it: bypassPermissions, or plan mode
/// with bypass available.
fn bypass_of(context: &Map<String, Value>) -> bool {
    let session = context.get("session");
    let mode = text(session, "mode");
    mode == "bypassPermissions" || (mode == "plan" && flag(session, "bypass_available"))
}

fn session_bypass(context: &Map<String, Value>) -> Value {
    Value::Bool(bypass_of(context))
}

/// `session.may_record`, as `facts::Session::may_record` derives it.
fn session_may_record(context: &Map<String, Value>) -> Value {
    let session = context.get("session");
    Value::Bool(
        text(session, "agent") == "main"
            && !flag(session, "permission_hook")
            && flag(session, "interactive")
            && !bypass_of(context),
    )
}

/// `projects.detail_known`: before the fact existed, a record whose project detail was
/// observed shows it in the knowledge sizes or in what the path names.
fn projects_detail_known(context: &Map<String, Value>) -> Value {
    let projects = context.get("projects");
    Value::Bool(flag(projects, "knowledge_known") || text(projects, "target_kind") != "unknown")
}

/// `projects.local_path_place`: before the fact existed nothing established where a
/// `local_path` lay (the executor checked it after an allow), so an old `local_path` write is
/// `unknown` — which today's policies refuse, and replay shows as a change — and any other call
/// has none.
fn projects_local_path_place(context: &Map<String, Value>) -> Value {
    let place = match text(context.get("projects"), "source") {
        "local_path" => "unknown",
        _ => "none",
    };
    Value::String(place.to_string())
}

/// `design.plan_registrable`: before the fact existed every finalize_plan ask was a plan ask,
/// as if its plan could be registered; no other operation has a plan.
fn design_plan_registrable(context: &Map<String, Value>) -> Value {
    Value::Bool(text(context.get("design"), "operation") == "finalize_plan")
}

/// `caller`: before the fact existed nothing bounded what a caller claimed, so an old record's
/// caller may claim anything (`facts::CallerFacts::unrestricted`).
fn caller_unrestricted(_: &Map<String, Value>) -> Value {
    serde_json::to_value(crate::facts::CallerFacts::unrestricted().to_context())
        .unwrap_or(Value::Null)
}

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

    #[test]
    fn an_old_local_path_write_is_completed_as_unknown_and_others_as_none() {
        let place = |source: &str| {
            let mut context = json!({"projects": {"source": source}});
            let context = context.as_object_mut().unwrap();
            complete_context(context);
            context["projects"]["local_path_place"].clone()
        };
        assert_eq!(place("local_path"), "unknown");
        assert_eq!(place("content"), "none");
        assert_eq!(place("none"), "none");
        let mut logged =
            json!({"projects": {"source": "local_path", "local_path_place": "under_root"}});
        let logged = logged.as_object_mut().unwrap();
        complete_context(logged);
        assert_eq!(logged["projects"]["local_path_place"], "under_root");
    }
}
