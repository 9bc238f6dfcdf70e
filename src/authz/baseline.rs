//! authz::baseline: the shipped schema and policies, embedded so `serve`, `check` and the
//! tests run on the same defaults without touching the file system.

use super::snapshot::Source;

pub const SCHEMA: (&str, &str) = (
    "schema/askgate.cedarschema",
    include_str!("../../schema/askgate.cedarschema"),
);

/// The baseline policy files of `policies/`, by concern.
pub const POLICIES: &[(&str, &str)] = &[
    (
        "policies/consent.cedar",
        include_str!("../../policies/consent.cedar"),
    ),
    (
        "policies/design.cedar",
        include_str!("../../policies/design.cedar"),
    ),
    (
        "policies/gates.cedar",
        include_str!("../../policies/gates.cedar"),
    ),
    (
        "policies/grants.cedar",
        include_str!("../../policies/grants.cedar"),
    ),
    (
        "policies/modes.cedar",
        include_str!("../../policies/modes.cedar"),
    ),
    (
        "policies/plans.cedar",
        include_str!("../../policies/plans.cedar"),
    ),
    (
        "policies/projects.cedar",
        include_str!("../../policies/projects.cedar"),
    ),
    (
        "policies/targets.cedar",
        include_str!("../../policies/targets.cedar"),
    ),
];

/// The baseline files that also apply in hook mode (Claude Code's `PreToolUse` hook): the
/// availability gates and the per-target classification. The other baseline files mirror
/// checks the client makes itself, with state only the client holds.
pub const HOOK_SHARED_FILES: [&str; 2] = ["gates.cedar", "targets.cedar"];

/// The hook-mode rules of `policies/hook/`, added to [`HOOK_SHARED_FILES`] and the managed
/// directories in hook mode.
pub const HOOK_POLICIES: &[(&str, &str)] = &[(
    "policies/hook/tighten.cedar",
    include_str!("../../policies/hook/tighten.cedar"),
)];

/// The schema of the approving set: who may answer an approval (`authz::approving`).
pub const APPROVING_SCHEMA: (&str, &str) = (
    "schema/approving.cedarschema",
    include_str!("../../schema/approving.cedarschema"),
);

/// The shipped approving rules of `policies/approving/`: any approver, and separation of
/// duties.
pub const APPROVING_POLICIES: &[(&str, &str)] = &[
    (
        "policies/approving/anyone.cedar",
        include_str!("../../policies/approving/anyone.cedar"),
    ),
    (
        "policies/approving/separation.cedar",
        include_str!("../../policies/approving/separation.cedar"),
    ),
];

/// The worked admin examples of `policies/examples/` (not loaded by default).
pub const EXAMPLES: &[(&str, &str)] = &[
    (
        "policies/examples/ask-project-delete.cedar",
        include_str!("../../policies/examples/ask-project-delete.cedar"),
    ),
    (
        "policies/examples/deny-public-sharing.cedar",
        include_str!("../../policies/examples/deny-public-sharing.cedar"),
    ),
    (
        "policies/examples/reserve-secrets.cedar",
        include_str!("../../policies/examples/reserve-secrets.cedar"),
    ),
];

pub fn schema_source() -> Source {
    Source::new(SCHEMA.0, SCHEMA.1)
}

pub fn policy_sources() -> Vec<Source> {
    POLICIES
        .iter()
        .map(|(name, text)| Source::new(*name, *text))
        .collect()
}

pub fn example_sources() -> Vec<Source> {
    EXAMPLES
        .iter()
        .map(|(name, text)| Source::new(*name, *text))
        .collect()
}

pub fn hook_policy_sources() -> Vec<Source> {
    HOOK_POLICIES
        .iter()
        .map(|(name, text)| Source::new(*name, *text))
        .collect()
}

pub fn approving_schema_source() -> Source {
    Source::new(APPROVING_SCHEMA.0, APPROVING_SCHEMA.1)
}

pub fn approving_policy_sources() -> Vec<Source> {
    APPROVING_POLICIES
        .iter()
        .map(|(name, text)| Source::new(*name, *text))
        .collect()
}
