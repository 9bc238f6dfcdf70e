//! What the state tests share: the instant they run at, a project id, and a plan approval
//! as the main agent's accepted `finalize_plan` gives it.

use time::macros::datetime;
use time::OffsetDateTime;

use super::plans::PlanApproval;

pub const NOW: OffsetDateTime = datetime!(2025-06-01 12:00:00 UTC);
pub const PROJECT: &str = "0a1b2c3d-0000-4000-8000-00000000abcd";

/// The approval of plan `token` on `project_id` writing `writes`: shown to the user, who
/// approved it, by the main agent, without a hook, the call succeeding.
pub fn approval<'a>(token: &'a str, project_id: &'a str, writes: &'a [String]) -> PlanApproval<'a> {
    PlanApproval {
        token,
        project_id,
        scope: None,
        writes,
        deletes: &[],
        server_expiry: None,
        ask_was_shown: true,
        prompt_reaches_user: true,
        main_agent_without_hook: true,
        result_is_error: false,
    }
}
