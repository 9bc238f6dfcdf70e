//! analysis::environments: the schema's request environments (principal type, action,
//! resource type: 53 for `schema/askgate.cedarschema`) and each side's policy set compiled for
//! one of them, per question of `decide`.
//!
//! `decide` asks a call's policies two questions: with `context.approvals` empty ("allowed
//! without a human?"), and with the approval kinds the `@ask` forbids named ("allowed if a
//! human approves?"). A symbolic query is about one request, so each question is a fixed
//! guard policy added to both sides that confines the solver to that question's requests:
//! `analysis.question-unapproved` forbids any request whose approvals are not empty, and
//! `analysis.question-approved` forbids any whose approvals are not every kind at once. Every
//! kind at once answers the second question exactly when policies read `approvals` only through
//! `isEmpty()` and an `@ask(kind)` forbid's `.contains(kind)` (as the shipped ones do): an ask
//! that did not apply without approvals does not apply with them. Target classification
//! (`write_target` / `delete_target`) has no approvals and one question: ordinary or blocked.

use cedar_policy::{
    ActionConstraint, Entities, EntityUid, Policy, PolicyId, PolicySet, RequestEnv, Schema,
};
use cedar_policy_symcc::CompiledPolicySet;

use super::AnalysisError;

/// The actions classified per target path (their context has no approvals).
pub const TARGET_ACTIONS: [&str; 2] = ["write_target", "delete_target"];

/// Every approval kind at once, as the approved question's guard names them.
pub const ALL_APPROVALS: &str = r#"["batch", "consent", "grant", "plan"]"#;

/// Which of `decide`'s questions a compiled set answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Question {
    /// Approvals empty: allowed without a human.
    Unapproved,
    /// Every approval kind given: allowed once a human approves.
    Approved,
    /// A target path: ordinary (allowed) or blocked.
    Target,
}

impl Question {
    fn guard(self) -> Option<(&'static str, String)> {
        let scope = r#"action in [Action::"ClaudeDesign", Action::"Projects"]"#;
        match self {
            Self::Unapproved => Some((
                "analysis.question-unapproved",
                format!("forbid (principal, {scope}, resource) when {{ !context.approvals.isEmpty() }};"),
            )),
            Self::Approved => Some((
                "analysis.question-approved",
                format!("forbid (principal, {scope}, resource) unless {{ context.approvals == {ALL_APPROVALS} }};"),
            )),
            Self::Target => None,
        }
    }
}

/// One request environment as reports name it.
#[derive(Debug, Clone)]
pub struct Environment {
    pub env: RequestEnv,
    pub principal: String,
    pub action: String,
    pub resource: String,
}

impl Environment {
    /// The action's id without `Action::` and quotes.
    pub fn is_target(&self) -> bool {
        TARGET_ACTIONS.contains(&self.action.as_str())
    }

    pub fn label(&self) -> String {
        format!("{} {} {}", self.principal, self.action, self.resource)
    }
}

/// Every request environment of `schema`, sorted by action then resource type.
pub fn environments(schema: &Schema) -> Vec<Environment> {
    let mut all: Vec<Environment> = schema
        .request_envs()
        .map(|env| Environment {
            principal: env.principal().to_string(),
            action: env.action().id().unescaped().to_string(),
            resource: env.resource().to_string(),
            env,
        })
        .collect();
    all.sort_by(|a, b| (&a.action, &a.resource).cmp(&(&b.action, &b.resource)));
    all
}

/// The guard policies of one question in one environment: the question's own and, for a
/// call, the well-formedness guards (`wellformed`).
pub fn guard_policies(
    question: Question,
    environment: &Environment,
) -> Result<Vec<Policy>, AnalysisError> {
    let mut guards: Vec<(String, String)> = Vec::new();
    if let Some((id, text)) = question.guard() {
        guards.push((id.to_string(), text));
        guards.extend(super::wellformed::guards(
            &environment.action,
            &environment.resource,
        ));
    }
    guards
        .into_iter()
        .map(|(id, text)| {
            Policy::parse(Some(PolicyId::new(id)), text).map_err(|error| AnalysisError::Compile {
                action: environment.label(),
                message: error.to_string(),
            })
        })
        .collect()
}

/// `policies` plus the question's guards, compiled for one environment.
pub fn compile(
    policies: &PolicySet,
    question: Question,
    environment: &Environment,
    schema: &Schema,
) -> Result<CompiledPolicySet, AnalysisError> {
    let compile_error = |message: String| AnalysisError::Compile {
        action: environment.label(),
        message,
    };
    let mut set = policies.clone();
    for guard in guard_policies(question, environment)? {
        set.add(guard)
            .map_err(|error| compile_error(error.to_string()))?;
    }
    CompiledPolicySet::compile(&set, &environment.env, schema)
        .map_err(|error| compile_error(error.to_string()))
}

/// Whether the policy's action scope can hold in `environment` (other environments are
/// skipped: the policy cannot match or err there).
pub fn reaches(policy: &Policy, environment: &Environment, actions: &Entities) -> bool {
    let action = environment.env.action();
    let within = |group: &EntityUid| group == action || actions.is_ancestor_of(group, action);
    match policy.action_constraint() {
        ActionConstraint::Any => true,
        ActionConstraint::Eq(only) => &only == action,
        ActionConstraint::In(groups) => groups.iter().any(within),
    }
}

/// The texts of the policies of `policies` that reach `environment`, sorted: two sides with
/// the same texts decide every request of the environment alike (no solver needed).
pub fn reaching(
    policies: &PolicySet,
    environment: &Environment,
    actions: &Entities,
) -> Vec<String> {
    let mut texts: Vec<String> = policies
        .policies()
        .filter(|policy| reaches(policy, environment, actions))
        .map(ToString::to_string)
        .collect();
    texts.sort();
    texts
}
