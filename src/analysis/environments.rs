//! analysis::environments: the schema's request environments (principal type, action,
//! resource type: 53 for `schema/askgate.cedarschema`), which policies can apply in each, and
//! whether two policy sets are the same text there (then they decide it alike, unsolved).

use cedar_policy::{ActionConstraint, Entities, EntityUid, Policy, PolicySet, RequestEnv, Schema};

/// The actions classified per target path (their context has no approvals).
pub const TARGET_ACTIONS: [&str; 2] = ["write_target", "delete_target"];

/// One request environment as reports name it.
#[derive(Debug, Clone)]
pub struct Environment {
    pub env: RequestEnv,
    pub principal: String,
    /// The action's id without `Action::` and quotes.
    pub action: String,
    pub resource: String,
}

impl Environment {
    /// A target classification (`write_target` / `delete_target`): ordinary or blocked.
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

/// The texts of the policies of `policies` that reach `environment`, with their `@ask`
/// annotations, sorted: two sides with the same texts decide every request of the environment
/// alike (no solver needed).
pub fn reaching(
    policies: &PolicySet,
    environment: &Environment,
    actions: &Entities,
) -> Vec<String> {
    let mut texts: Vec<String> = policies
        .policies()
        .filter(|policy| reaches(policy, environment, actions))
        .map(super::outcome::key)
        .collect();
    texts.sort();
    texts
}
