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
