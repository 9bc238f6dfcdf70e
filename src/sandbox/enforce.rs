//! sandbox::enforce: the server-side checks on `tools/call` (consent, durable grants, plan
//! tokens), so that a gateway bug can never write without permission. Pure: it reads the state
//! and the time it is given and changes nothing.

use serde_json::{json, Value};

use super::arguments::{targets, Arguments, Targets};
use super::state::DesignState;

/// The only consent bit.
pub const CONSENT_BIT: &str = "agent_design_projects";

/// Why a call is refused with HTTP 403; the body is what the client reads.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    NeedsConsent,
    NeedsProjectGrant(String),
}

impl Refusal {
    pub fn body(&self) -> Value {
        match self {
            Refusal::NeedsConsent => json!({"error": "needs_consent", "consent": CONSENT_BIT}),
            Refusal::NeedsProjectGrant(project_id) => {
                json!({"error": "needs_project_grant", "project_id": project_id})
            }
        }
    }
}

/// Checks one `tools/call` at `now` (unix seconds). Arguments that cannot be read pass here:
/// the operation reads them through the same functions and fails before changing anything.
pub fn authorize(
    state: &DesignState,
    now: i64,
    tool: &str,
    arguments: Arguments<'_>,
) -> Result<(), Refusal> {
    if !state.consent {
        return Err(Refusal::NeedsConsent);
    }
    let Some(Ok(targets)) = targets(tool, arguments) else {
        return Ok(());
    };
    let Ok(project_id) = arguments.required_str("project_id") else {
        return Ok(());
    };
    let refusal = || Refusal::NeedsProjectGrant(project_id.to_owned());
    let Ok(token) = arguments.plan_token() else {
        return Err(refusal());
    };
    let Some(token) = token else {
        // Only tokenless writes of files and the support script can lean on a durable grant.
        let grant_eligible = matches!(tool, "write_files" | "create_support_js");
        return if grant_eligible && state.grants.contains_key(project_id) {
            Ok(())
        } else {
            Err(refusal())
        };
    };
    let Some(plan) = state.plans.get(token) else {
        return Err(refusal());
    };
    let covered = match &targets {
        Targets::Writes(paths) => paths.iter().all(|path| plan.writes.contains(path)),
        Targets::Deletes(paths) => paths.iter().all(|path| plan.deletes.contains(path)),
    };
    if plan.project_id == project_id && plan.expires_at > now && covered {
        Ok(())
    } else {
        Err(refusal())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::state::PlanGrant;
    use serde_json::Map;

    fn state() -> DesignState {
        let mut state = DesignState::seed();
        state.consent = true;
        state.plans.insert(
            "pt_1".into(),
            PlanGrant {
                project_id: "p1".into(),
                writes: ["a.html".to_owned()].into(),
                deletes: ["old.css".to_owned()].into(),
                expires_at: 1_000,
            },
        );
        state
    }

    fn check(state: &DesignState, now: i64, tool: &str, arguments: Value) -> Result<(), Refusal> {
        let map: Map<String, Value> = arguments.as_object().unwrap().clone();
        authorize(state, now, tool, Arguments(&map))
    }

    fn grant_refusal() -> Result<(), Refusal> {
        Err(Refusal::NeedsProjectGrant("p1".into()))
    }

    #[test]
    fn consent_comes_first_for_every_tool() {
        let mut state = state();
        state.consent = false;
        assert_eq!(
            check(&state, 0, "list_projects", json!({})),
            Err(Refusal::NeedsConsent)
        );
        assert_eq!(
            Refusal::NeedsConsent.body()["consent"],
            "agent_design_projects"
        );
    }

    #[test]
    fn tokenless_writes_need_a_grant_and_deletes_or_copies_never_use_one() {
        let mut state = state();
        let write = json!({"project_id": "p1", "files": [{"path": "x"}]});
        assert_eq!(
            check(&state, 0, "write_files", write.clone()),
            grant_refusal()
        );
        state
            .grants
            .insert("p1".into(), "2026-01-01T00:00:00Z".into());
        assert_eq!(check(&state, 0, "write_files", write), Ok(()));
        let empty_token = json!({"project_id": "p1", "plan_token": ""});
        assert_eq!(check(&state, 0, "create_support_js", empty_token), Ok(()));
        let delete = json!({"project_id": "p1", "paths": ["x"]});
        assert_eq!(check(&state, 0, "delete_files", delete), grant_refusal());
        let copy = json!({"project_id": "p1", "files": [{"src": "a", "dest": "b"}]});
        assert_eq!(check(&state, 0, "copy_files", copy), grant_refusal());
    }

    #[test]
    fn plan_tokens_cover_exact_targets_until_expiry_on_their_project() {
        let state = state();
        let write = |project: &str, path: &str| json!({"project_id": project, "plan_token": "pt_1", "files": [{"path": path}]});
        assert_eq!(
            check(&state, 999, "write_files", write("p1", "./a.html")),
            Ok(())
        );
        assert_eq!(
            check(&state, 1_000, "write_files", write("p1", "a.html")),
            grant_refusal()
        );
        assert_eq!(
            check(&state, 0, "write_files", write("p1", "b.html")),
            grant_refusal()
        );
        assert_eq!(
            check(&state, 0, "write_files", write("p2", "a.html")),
            Err(Refusal::NeedsProjectGrant("p2".into()))
        );
        let delete = json!({"project_id": "p1", "plan_token": "pt_1", "paths": ["old.css"]});
        assert_eq!(check(&state, 0, "delete_files", delete), Ok(()));
        let delete_write = json!({"project_id": "p1", "plan_token": "pt_1", "paths": ["a.html"]});
        assert_eq!(
            check(&state, 0, "delete_files", delete_write),
            grant_refusal()
        );
        let unknown = json!({"project_id": "p1", "plan_token": "pt_2", "files": []});
        assert_eq!(check(&state, 0, "write_files", unknown), grant_refusal());
    }
}
