//! authz: Cedar request building and the tri-state decision. Pure and synchronous: no clock,
//! no I/O. Rust gathers facts (`crate::facts`) and maps Cedar's answer; the rules are the
//! `.cedar` files.
//!
//! Map: `snapshot` (validated policy set + metadata + hash), `load` (parsing, annotations,
//! strict validation), `limits` (how deep and long a policy may be; the build's own stack), `context` (typed request contexts mirroring the schema), `input` (the
//! decision input: one call's facts) and `entity` (Cedar entity references), `evaluate` (one
//! question and its answer; who answers), `cache` (Cedar's answers on the policy slices,
//! cached per snapshot: the index, what each policy reads, the projection and the store, behind
//! `cache::on(..).answer(..)`), `reference` (the same questions put to plain Cedar, whole: what
//! the cache is proved against), `targets` (per-target classification), `decide` (the two
//! questions and deny > ask > allow), `card` (approval cards), `requests` (the Cedar requests a
//! decision asked), `reason` (reason text), `baseline` (the embedded shipped policies),
//! `problem` (load errors), `approving` (who may answer an approval: its own set and schema).

pub mod approving;
pub mod baseline;
pub mod cache;
pub mod card;
pub mod context;
pub mod decide;
pub mod decision;
pub mod entity;
pub mod evaluate;
pub mod input;
pub mod limits;
pub mod load;
pub mod problem;
pub mod reason;
pub mod reference;
pub mod requests;
pub mod snapshot;
pub mod targets;

use serde::{Deserialize, Serialize};

pub use card::Approval;
pub use decide::decide;
pub use decision::{BlockedTarget, Decision, EvaluatedRequest, Outcome, Question, RequestContext};
pub use entity::EntityRef;
pub use input::{CallFacts, CallSummary};
pub use problem::{LoadError, LoadProblem};
pub use snapshot::{PolicyMeta, PolicySnapshot, Source};

/// The kinds of human approval an ask can request, in the order they take precedence when
/// several asks apply to one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalKind {
    Consent,
    Grant,
    Plan,
    Batch,
}

impl ApprovalKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Consent => "consent",
            Self::Grant => "grant",
            Self::Plan => "plan",
            Self::Batch => "batch",
        }
    }
}

impl std::str::FromStr for ApprovalKind {
    type Err = ();

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        match value {
            "consent" => Ok(Self::Consent),
            "grant" => Ok(Self::Grant),
            "plan" => Ok(Self::Plan),
            "batch" => Ok(Self::Batch),
            _ => Err(()),
        }
    }
}

/// Something that kept a request from being evaluated cleanly; always fails closed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EvaluationError {
    #[error("could not build the request context: {0}")]
    Context(String),
    #[error("could not build the request: {0}")]
    Request(String),
    #[error("invalid entity id `{0}`")]
    EntityId(String),
}
