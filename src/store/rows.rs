//! store::rows: what the fleet store keeps as JSON — account events, plans and attestations —
//! as versioned wire types (issue 39 §2), apart from the domain types they carry. A domain
//! type may be renamed or reshaped freely: only its conversion here changes, and the committed
//! fixtures (`tests/fixtures/store/*-v1.json`, decoded in the tests below) prove that what a
//! replica of this version writes is what one of the previous version reads, and back. A
//! change of a row's shape is a new `…V2` type, a new fleet schema version (`migrate`), and a
//! new fixture. `V1` is the shape every replica has written since the fleet store began.
//! An approval's view is [`approval::ApprovalV1`] — the row, the HTTP body and the webhook's
//! alike. The held call (`approvals.call`) is its intake (the session facts and the parsed
//! call, the same types the decision is gathered from) beside its kinds; its shape is pinned
//! by `tests/fixtures/store/approvals-v1.json`, read and written back unchanged below.

pub mod approval;
pub mod held;

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::facts::Mode;
use crate::paths::PathSet;
use crate::state::{AccountEvent, ApprovedPlan, SessionKey};
use crate::store::attestations::Attestation;

/// A row of `account_events.event`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case", deny_unknown_fields)]
pub enum AccountEventV1 {
    ConsentGranted,
    ConsentFetched {
        generation: u64,
        granted: bool,
    },
    ConsentSeededRefused,
    ConsentRevoked,
    ProjectGrantDemanded {
        project_id: String,
    },
    MembershipOrSharingChanged {
        project_id: String,
    },
    GrantVerified {
        project_id: String,
    },
    GrantNotEligible {
        project_id: String,
    },
    ServerGrantObserved {
        project_id: String,
    },
    PlanFinalizeStarted {
        session: SessionKeyV1,
        project_id: String,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionKeyV1 {
    pub principal: String,
    pub id: String,
}

/// A row of `plans.plan`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanV1 {
    pub token: String,
    pub project_id: String,
    pub writes: BTreeSet<String>,
    pub deletes: BTreeSet<String>,
    #[serde(with = "time::serde::rfc3339")]
    pub expires_at: OffsetDateTime,
}

/// A row of `attestations.body`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AttestationV1 {
    pub session_id: String,
    pub mode: ModeV1,
    pub agent_id: Option<String>,
    pub server: String,
    pub tool: String,
    pub input_digest: [u8; 32],
    #[serde(with = "time::serde::rfc3339")]
    pub received_at: OffsetDateTime,
}

/// A permission mode as rows name it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ModeV1 {
    #[default]
    #[serde(rename = "default", alias = "manual")]
    Default,
    #[serde(rename = "acceptEdits")]
    AcceptEdits,
    #[serde(rename = "plan")]
    Plan,
    #[serde(rename = "auto")]
    Auto,
    #[serde(rename = "dontAsk")]
    DontAsk,
    #[serde(rename = "bypassPermissions")]
    BypassPermissions,
}

impl From<&AccountEvent> for AccountEventV1 {
    fn from(event: &AccountEvent) -> Self {
        match event.clone() {
            AccountEvent::ConsentGranted => Self::ConsentGranted,
            AccountEvent::ConsentFetched {
                generation,
                granted,
            } => Self::ConsentFetched {
                generation,
                granted,
            },
            AccountEvent::ConsentSeededRefused => Self::ConsentSeededRefused,
            AccountEvent::ConsentRevoked => Self::ConsentRevoked,
            AccountEvent::ProjectGrantDemanded { project_id } => {
                Self::ProjectGrantDemanded { project_id }
            }
            AccountEvent::MembershipOrSharingChanged { project_id } => {
                Self::MembershipOrSharingChanged { project_id }
            }
            AccountEvent::GrantVerified { project_id } => Self::GrantVerified { project_id },
            AccountEvent::GrantNotEligible { project_id } => Self::GrantNotEligible { project_id },
            AccountEvent::ServerGrantObserved { project_id } => {
                Self::ServerGrantObserved { project_id }
            }
            AccountEvent::PlanFinalizeStarted {
                session,
                project_id,
            } => Self::PlanFinalizeStarted {
                session: SessionKeyV1 {
                    principal: session.principal,
                    id: session.id,
                },
                project_id,
            },
        }
    }
}

impl From<AccountEventV1> for AccountEvent {
    fn from(row: AccountEventV1) -> Self {
        match row {
            AccountEventV1::ConsentGranted => Self::ConsentGranted,
            AccountEventV1::ConsentFetched {
                generation,
                granted,
            } => Self::ConsentFetched {
                generation,
                granted,
            },
            AccountEventV1::ConsentSeededRefused => Self::ConsentSeededRefused,
            AccountEventV1::ConsentRevoked => Self::ConsentRevoked,
            AccountEventV1::ProjectGrantDemanded { project_id } => {
                Self::ProjectGrantDemanded { project_id }
            }
            AccountEventV1::MembershipOrSharingChanged { project_id } => {
                Self::MembershipOrSharingChanged { project_id }
            }
            AccountEventV1::GrantVerified { project_id } => Self::GrantVerified { project_id },
            AccountEventV1::GrantNotEligible { project_id } => {
                Self::GrantNotEligible { project_id }
            }
            AccountEventV1::ServerGrantObserved { project_id } => {
                Self::ServerGrantObserved { project_id }
            }
            AccountEventV1::PlanFinalizeStarted {
                session,
                project_id,
            } => Self::PlanFinalizeStarted {
                session: SessionKey {
                    principal: session.principal,
                    id: session.id,
                },
                project_id,
            },
        }
    }
}

impl From<&ApprovedPlan> for PlanV1 {
    fn from(plan: &ApprovedPlan) -> Self {
        Self {
            token: plan.token.clone(),
            project_id: plan.project_id.clone(),
            writes: plan.writes.iter().cloned().collect(),
            deletes: plan.deletes.iter().cloned().collect(),
            expires_at: plan.expires_at,
        }
    }
}

impl From<PlanV1> for ApprovedPlan {
    fn from(row: PlanV1) -> Self {
        Self {
            token: row.token,
            project_id: row.project_id,
            writes: PathSet::new(row.writes),
            deletes: PathSet::new(row.deletes),
            expires_at: row.expires_at,
        }
    }
}

impl From<&Attestation> for AttestationV1 {
    fn from(attestation: &Attestation) -> Self {
        Self {
            session_id: attestation.session_id.clone(),
            mode: ModeV1::from(attestation.mode),
            agent_id: attestation.agent_id.clone(),
            server: attestation.server.clone(),
            tool: attestation.tool.clone(),
            input_digest: attestation.input_digest,
            received_at: attestation.received_at,
        }
    }
}

impl From<AttestationV1> for Attestation {
    fn from(row: AttestationV1) -> Self {
        Self {
            session_id: row.session_id,
            mode: Mode::from(row.mode),
            agent_id: row.agent_id,
            server: row.server,
            tool: row.tool,
            input_digest: row.input_digest,
            received_at: row.received_at,
        }
    }
}

impl From<Mode> for ModeV1 {
    fn from(mode: Mode) -> Self {
        match mode {
            Mode::Default => Self::Default,
            Mode::AcceptEdits => Self::AcceptEdits,
            Mode::Plan => Self::Plan,
            Mode::Auto => Self::Auto,
            Mode::DontAsk => Self::DontAsk,
            Mode::BypassPermissions => Self::BypassPermissions,
        }
    }
}

impl From<ModeV1> for Mode {
    fn from(mode: ModeV1) -> Self {
        match mode {
            ModeV1::Default => Self::Default,
            ModeV1::AcceptEdits => Self::AcceptEdits,
            ModeV1::Plan => Self::Plan,
            ModeV1::Auto => Self::Auto,
            ModeV1::DontAsk => Self::DontAsk,
            ModeV1::BypassPermissions => Self::BypassPermissions,
        }
    }
}

/// `value` as row type `R`, then as the domain type `T`.
pub fn decode<R, T>(value: serde_json::Value) -> Result<T, serde_json::Error>
where
    R: serde::de::DeserializeOwned + Into<T>,
{
    serde_json::from_value::<R>(value).map(Into::into)
}

/// The domain value `value` as its row type `R`, as JSON.
pub fn encode<'a, T: 'a, R>(value: &'a T) -> Result<serde_json::Value, serde_json::Error>
where
    R: Serialize + From<&'a T>,
{
    serde_json::to_value(R::from(value))
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    /// Every row of a fixture reads as its domain type and writes back byte for byte (as JSON
    /// values): what the previous version wrote, this one reads, and writes the same.
    fn round_trips<R, T>(fixture: &str) -> Vec<T>
    where
        R: serde::de::DeserializeOwned + Serialize + Into<T> + for<'a> From<&'a T>,
    {
        let rows: Vec<Value> = serde_json::from_str(fixture).expect("the fixture is JSON");
        rows.into_iter()
            .map(|row| {
                let value: T = decode::<R, T>(row.clone()).unwrap_or_else(|e| panic!("{row}: {e}"));
                assert_eq!(encode::<T, R>(&value).unwrap(), row);
                value
            })
            .collect()
    }

    #[test]
    fn every_account_event_of_the_v1_fixture_reads_and_writes_back_unchanged() {
        let events = round_trips::<AccountEventV1, AccountEvent>(include_str!(
            "../../tests/fixtures/store/account-events-v1.json"
        ));
        let kinds: BTreeSet<String> = events
            .iter()
            .map(|event| {
                format!("{event:?}")
                    .split([' ', '{'])
                    .next()
                    .unwrap()
                    .to_string()
            })
            .collect();
        assert_eq!(
            kinds.len(),
            10,
            "the fixture holds every kind of event: {kinds:?}"
        );
    }

    #[test]
    fn plans_and_attestations_of_the_v1_fixtures_read_and_write_back_unchanged() {
        let plans = round_trips::<PlanV1, ApprovedPlan>(include_str!(
            "../../tests/fixtures/store/plans-v1.json"
        ));
        assert!(plans[0].writes.contains("index.html"));
        let attestations = round_trips::<AttestationV1, Attestation>(include_str!(
            "../../tests/fixtures/store/attestations-v1.json"
        ));
        let modes: BTreeSet<String> = attestations
            .iter()
            .map(|attestation| format!("{:?}", attestation.mode))
            .collect();
        assert_eq!(modes.len(), 6, "every mode: {modes:?}");
    }

    /// An approval row (`approvals.view`, `approvals.call`) of every card kind, as the
    /// previous version wrote it, reads as this version's approval and held call and writes
    /// back the same JSON: a field renamed or dropped in the domain types fails here.
    #[test]
    fn approvals_of_the_v1_fixture_read_and_write_back_unchanged() {
        use crate::store::approvals::{ApprovalView, PendingCall};
        let rows: Vec<Value> =
            serde_json::from_str(include_str!("../../tests/fixtures/store/approvals-v1.json"))
                .expect("the fixture is JSON");
        let mut kinds = BTreeSet::new();
        for row in rows {
            let stored = row.get("view").cloned().unwrap_or_default();
            let view: ApprovalView = serde_json::from_value(stored.clone()).unwrap();
            assert_eq!(serde_json::to_value(&view).unwrap(), stored);
            let wire: approval::ApprovalV1 = serde_json::from_value(stored.clone()).unwrap();
            assert_eq!(serde_json::to_value(&wire).unwrap(), stored);
            let held = row.get("call").cloned().unwrap_or_default();
            let call: PendingCall = serde_json::from_value(held.clone()).unwrap();
            assert_eq!(serde_json::to_value(&call).unwrap(), held);
            let wire: held::HeldCallV1 = serde_json::from_value(held.clone()).unwrap();
            assert_eq!(serde_json::to_value(&wire).unwrap(), held);
            // The binding the previous version computed still holds for the call as read.
            let bound = view.bound.as_ref().map(|bound| bound.call.clone());
            let digest = crate::store::approvals::binding::digest(&call.intake.call);
            assert_eq!(bound, Some(digest), "{held}");
            kinds.insert(format!("{}/{:?}", view.summary.tool, view.card.kind()));
        }
        assert_eq!(kinds.len(), 4, "consent, grant, two batches: {kinds:?}");
    }

    /// In a rolling upgrade a replica reads the rows a newer one wrote: an approval field
    /// this version does not know is ignored (as it always was), never an error.
    #[test]
    fn an_approval_row_with_a_field_this_version_does_not_know_still_reads() {
        let rows: Vec<Value> =
            serde_json::from_str(include_str!("../../tests/fixtures/store/approvals-v1.json"))
                .expect("the fixture is JSON");
        let mut stored = rows
            .first()
            .and_then(|row| row.get("view"))
            .cloned()
            .unwrap_or_default();
        let known = stored.clone();
        if let Some(fields) = stored.as_object_mut() {
            fields.insert("added_later".into(), serde_json::json!({"any": 1}));
        }
        let view: crate::store::approvals::ApprovalView = serde_json::from_value(stored).unwrap();
        assert_eq!(serde_json::to_value(&view).unwrap(), known);
    }

    #[test]
    fn a_plan_is_stored_with_its_paths_as_lists_and_an_rfc3339_expiry() {
        let plan = ApprovedPlan {
            token: "t".into(),
            project_id: "p1".into(),
            writes: PathSet::new(["index.html".to_string()].into()),
            deletes: PathSet::default(),
            expires_at: time::macros::datetime!(2025-06-01 12:15 UTC),
        };
        let json = encode::<_, PlanV1>(&plan).unwrap();
        assert_eq!(json["expires_at"], "2025-06-01T12:15:00Z");
        assert_eq!(json["writes"], serde_json::json!(["index.html"]));
        assert_eq!(decode::<PlanV1, ApprovedPlan>(json).unwrap(), plan);
    }

    #[test]
    fn a_row_with_a_field_this_version_does_not_know_is_refused() {
        let row = serde_json::json!({"event": "grant_verified", "project_id": "p1", "new": 1});
        assert!(decode::<AccountEventV1, AccountEvent>(row).is_err());
    }
}
