//! Path analysis: computes facts about target paths (normalization, rejected characters,
//! folded segments, default-ignorables and confusable skeletons), enumerates an operation's targets, checks display budgets and project
//! ids, and shares sets of paths (`set`). It must not decide whether a path is reserved:
//! Cedar policies do that over the facts computed here.

mod budget;
mod characters;
mod confusables;
mod normalize;
mod project_id;
mod set;
mod targets;

pub use budget::{
    check_plan_display, fits_batch_display, fits_plan_display, js_length, PlanDisplayRefusal,
};
pub use characters::{is_js_whitespace, rejected_character, rejected_character_class};
pub use confusables::{has_default_ignorable, is_default_ignorable, skeleton, skeleton_segments};
pub use normalize::{normalize, target_facts, LookAlike, TargetFacts, STRING_OVERHEAD};
pub use project_id::{is_displayable_project_id, is_strict_project_id, project_key};
pub use set::PathSet;
pub use targets::{enumerate_targets, Enumeration, TargetSet};

/// Most targets one call may name and still pass the target verdict (`u0f`); enumeration
/// itself lists them all.
pub const MAX_TARGETS: usize = 256;
/// Most writes, or deletes, a plan or a tokenless batch may display (`i8a`).
pub const MAX_DISPLAY_ENTRIES: usize = 20;
/// Longest path (raw for plans, JSON-quoted for batches) that may be displayed (`Xqr`).
pub const MAX_PATH_DISPLAY: usize = 80;
/// Character budget of the rendered ask, the verbose cap of the argument renderer (`d0f`).
pub const DISPLAY_BUDGET: usize = 2000;
/// Longest strict project id (`Xqr-2`): 80 minus the two JSON quotes.
pub const MAX_PROJECT_ID: usize = MAX_PATH_DISPLAY - 2;

/// Whether a finalized plan may be registered (client-facts §3 g0f step 2): the project id
/// passes `znS` and the writes/deletes pass `jnS`.
pub fn plan_registrable(project_id: &str, writes: &[String], deletes: &[String]) -> bool {
    is_displayable_project_id(project_id) && fits_plan_display(writes, deletes)
}
