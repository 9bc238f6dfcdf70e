//! authz::approving: who may answer an approval (issue 35 §1). Approving is a Cedar request:
//! principal the approver (`Person::"<principal>"`), action `approve` or `refuse`, resource the
//! approval with what its card shows as attributes, against the approving set
//! (`schema/approving.cedarschema`, the embedded `policies/approving/` and each managed
//! directory's `approving/`). Rust builds the entities and maps Cedar's answer; the rules (any
//! approver, separation of duties, an admin's narrowing) are the policies. Fails closed: a
//! request that cannot be built, or an evaluation error, is not eligible and says why.

use std::collections::{HashMap, HashSet};

use cedar_policy::{
    Authorizer, Context, Decision as CedarDecision, Entities, Entity, EntityId, EntityTypeName,
    EntityUid, PolicyId, Request, RestrictedExpression,
};

use super::snapshot::PolicySnapshot;

/// An approver's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Vote {
    Approve,
    Refuse,
}

impl Vote {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Approve => "approve",
            Self::Refuse => "refuse",
        }
    }
}

/// The person who answers: the approver token's configured principal and attributes.
#[derive(Debug, Clone, Copy)]
pub struct Approver<'a> {
    pub principal: &'a str,
    pub groups: &'a [String],
    pub email: &'a str,
}

/// One approval as its card shows it (the schema's `Approval`, field for field).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApprovalFacts {
    pub kind: String,
    pub kinds: Vec<String>,
    pub tool: String,
    pub operation: String,
    pub project: String,
    pub targets: Vec<String>,
    pub writes: bool,
    /// The principal of the caller whose agent asked.
    pub requester: String,
    pub agent: String,
    pub agent_id: String,
    pub mode: String,
    pub attestation: String,
    /// Unanswered past `escalation.after_seconds` and handed to the second group.
    pub escalated: bool,
}

/// What the configuration says about approving (the schema's `ApprovingContext`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApprovingSettings {
    pub separation_of_duties: bool,
}

impl Default for ApprovingSettings {
    fn default() -> Self {
        Self {
            separation_of_duties: true,
        }
    }
}

/// The answer: eligible, or not and why (the determining policies and their reasons).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Eligibility {
    Eligible,
    NotEligible {
        policies: Vec<String>,
        reason: String,
    },
}

impl Eligibility {
    pub fn is_eligible(&self) -> bool {
        matches!(self, Self::Eligible)
    }

    fn refused(reason: String) -> Self {
        Self::NotEligible {
            policies: Vec::new(),
            reason,
        }
    }
}

/// Whether `approver` may give `vote` on `approval` under `snapshot` (the approving set).
pub fn eligibility(
    snapshot: &PolicySnapshot,
    approver: Approver<'_>,
    vote: Vote,
    approval: &ApprovalFacts,
    settings: ApprovingSettings,
) -> Eligibility {
    let request = match build(snapshot, approver, vote, approval, settings) {
        Ok(request) => request,
        Err(error) => {
            return Eligibility::refused(format!(
                "askgate could not ask the approving policies ({error})"
            ))
        }
    };
    let (request, entities) = request;
    let response = Authorizer::new().is_authorized(&request, snapshot.policies(), &entities);
    let errors: Vec<String> = response
        .diagnostics()
        .errors()
        .map(ToString::to_string)
        .collect();
    if !errors.is_empty() {
        return Eligibility::refused(format!(
            "an approving policy failed to evaluate ({})",
            errors.join("; ")
        ));
    }
    let reasons: Vec<&PolicyId> = response.diagnostics().reason().collect();
    if response.decision() == CedarDecision::Allow {
        return Eligibility::Eligible;
    }
    if reasons.is_empty() {
        return Eligibility::refused(format!(
            "no approving policy lets `{}` {} this approval",
            approver.principal,
            vote.as_str()
        ));
    }
    let mut policies: Vec<String> = reasons.iter().map(ToString::to_string).collect();
    policies.sort();
    let reason = policies
        .iter()
        .filter_map(|id| snapshot.meta(&PolicyId::new(id)))
        .map(|meta| meta.reason.clone())
        .filter(|reason| !reason.is_empty())
        .collect::<Vec<_>>()
        .join("; ");
    let reason = if reason.is_empty() {
        format!("refused by {}", policies.join(", "))
    } else {
        reason
    };
    Eligibility::NotEligible { policies, reason }
}

type Built = (Request, Entities);

fn build(
    snapshot: &PolicySnapshot,
    approver: Approver<'_>,
    vote: Vote,
    approval: &ApprovalFacts,
    settings: ApprovingSettings,
) -> Result<Built, String> {
    let person = |principal: &str| uid("Person", principal);
    let approver_uid = person(approver.principal)?;
    let requester_uid = person(&approval.requester)?;
    let approval_uid = uid("Approval", "this")?;
    let action = uid("Action", vote.as_str())?;
    let strings = |values: &[String]| {
        RestrictedExpression::new_set(values.iter().cloned().map(RestrictedExpression::new_string))
    };
    let person_entity = |id: EntityUid, groups: &[String], email: &str| {
        let attrs = HashMap::from([
            ("groups".to_string(), strings(groups)),
            (
                "email".to_string(),
                RestrictedExpression::new_string(email.to_string()),
            ),
        ]);
        Entity::new(id, attrs, HashSet::new()).map_err(|error| error.to_string())
    };
    let mut entities = vec![person_entity(
        approver_uid.clone(),
        approver.groups,
        approver.email,
    )?];
    if requester_uid != approver_uid {
        entities.push(person_entity(requester_uid.clone(), &[], "")?);
    }
    let text = |value: &str| RestrictedExpression::new_string(value.to_string());
    let attrs = HashMap::from([
        ("kind".to_string(), text(&approval.kind)),
        ("kinds".to_string(), strings(&approval.kinds)),
        ("tool".to_string(), text(&approval.tool)),
        ("operation".to_string(), text(&approval.operation)),
        ("project".to_string(), text(&approval.project)),
        ("targets".to_string(), strings(&approval.targets)),
        (
            "writes".to_string(),
            RestrictedExpression::new_bool(approval.writes),
        ),
        (
            "requester".to_string(),
            RestrictedExpression::new_entity_uid(requester_uid),
        ),
        ("agent".to_string(), text(&approval.agent)),
        ("agent_id".to_string(), text(&approval.agent_id)),
        ("mode".to_string(), text(&approval.mode)),
        ("attestation".to_string(), text(&approval.attestation)),
        (
            "escalated".to_string(),
            RestrictedExpression::new_bool(approval.escalated),
        ),
    ]);
    entities.push(
        Entity::new(approval_uid.clone(), attrs, HashSet::new())
            .map_err(|error| error.to_string())?,
    );
    let schema = Some(snapshot.schema());
    let entities = Entities::from_entities(entities, schema).map_err(|error| error.to_string())?;
    let context = Context::from_pairs([(
        "separation_of_duties".to_string(),
        RestrictedExpression::new_bool(settings.separation_of_duties),
    )])
    .map_err(|error| error.to_string())?;
    let request = Request::new(approver_uid, action, approval_uid, context, schema)
        .map_err(|error| error.to_string())?;
    Ok((request, entities))
}

fn uid(kind: &str, id: &str) -> Result<EntityUid, String> {
    let kind: EntityTypeName = kind.parse().map_err(|error| format!("{error}"))?;
    Ok(EntityUid::from_type_name_and_id(kind, EntityId::new(id)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authz::baseline;

    fn shipped() -> PolicySnapshot {
        PolicySnapshot::load(
            &baseline::approving_schema_source(),
            &baseline::approving_policy_sources(),
        )
        .expect("the shipped approving set loads")
    }

    fn asked_by(requester: &str) -> ApprovalFacts {
        ApprovalFacts {
            kind: "grant".into(),
            kinds: vec!["grant".into()],
            tool: "ClaudeDesign".into(),
            operation: "write_files".into(),
            project: "p1".into(),
            targets: vec!["index.html".into()],
            writes: true,
            requester: requester.into(),
            agent: "main".into(),
            agent_id: String::new(),
            mode: "default".into(),
            attestation: "none".into(),
            escalated: false,
        }
    }

    fn approver(principal: &str) -> Approver<'_> {
        Approver {
            principal,
            groups: &[],
            email: "",
        }
    }

    #[test]
    fn any_other_approver_may_answer_and_nobody_approves_their_own_agents_call() {
        let set = shipped();
        let on = ApprovingSettings::default();
        let approval = asked_by("alice");
        let bob = eligibility(&set, approver("bob"), Vote::Approve, &approval, on);
        assert_eq!(bob, Eligibility::Eligible);
        let alice = eligibility(&set, approver("alice"), Vote::Approve, &approval, on);
        let Eligibility::NotEligible { policies, reason } = alice else {
            panic!("alice approved her own agent's call");
        };
        assert_eq!(policies, vec!["approving.separation-of-duties".to_string()]);
        assert!(reason.contains("separation of duties"), "{reason}");
        let refusal = eligibility(&set, approver("alice"), Vote::Refuse, &approval, on);
        assert_eq!(refusal, Eligibility::Eligible, "refusing is always allowed");
        let off = ApprovingSettings {
            separation_of_duties: false,
        };
        let relaxed = eligibility(&set, approver("alice"), Vote::Approve, &approval, off);
        assert_eq!(relaxed, Eligibility::Eligible);
    }

    #[test]
    fn an_empty_approving_set_lets_nobody_answer() {
        let set = PolicySnapshot::load(&baseline::approving_schema_source(), &[]).unwrap();
        let answer = eligibility(
            &set,
            approver("bob"),
            Vote::Approve,
            &asked_by("alice"),
            ApprovingSettings::default(),
        );
        assert!(
            matches!(&answer, Eligibility::NotEligible { reason, .. } if reason.contains("no approving policy")),
            "{answer:?}"
        );
    }
}
