//! server::prepared: a call after validation and fact gathering, ready to decide — what the
//! gateway decides on, the decision log records and an approval holds — and how it arrived
//! (the front door, the client's tool-use id, how long it waits). Built in one place
//! ([`Prepared::new`]) from the call's [`Intake`], whether the call just arrived or an approval
//! decides it again.

use std::sync::Arc;

use crate::authz::{CallFacts, PolicySnapshot};
use crate::facts::observations::LocalFileStat;
use crate::store::approvals::Intake;

/// A call after validation and fact gathering, ready to decide.
pub struct Prepared {
    pub decision_id: String,
    /// The call as it came in: an approval keeps it whole.
    pub intake: Intake,
    pub arrival: Arrival,
    pub facts: CallFacts,
    /// The `local_path` file the decision saw; the executor reads only that same file.
    pub local_file: Option<LocalFileStat>,
    /// The policy set the call is decided on: the one its gates were checked on, loaded once
    /// when the call came in.
    pub snapshot: Arc<PolicySnapshot>,
    /// The shadow set of the same generation (`server::policies`), compared beside it.
    pub shadow: Option<Arc<PolicySnapshot>>,
}

/// The facts gathered for an intake, and the file they saw.
pub type Gathered = (CallFacts, Option<LocalFileStat>);

impl Prepared {
    /// `intake` ready to decide on `snapshot` (and compared on `shadow`), under a new decision
    /// id.
    pub fn new(
        intake: Intake,
        arrival: Arrival,
        (facts, local_file): Gathered,
        snapshot: Arc<PolicySnapshot>,
        shadow: Option<Arc<PolicySnapshot>>,
    ) -> Self {
        Self {
            decision_id: uuid::Uuid::new_v4().to_string(),
            intake,
            arrival,
            facts,
            local_file,
            snapshot,
            shadow,
        }
    }
}

/// How a call arrived: the door, the client's id for the tool call, how long it waits.
#[derive(Debug, Clone, Default)]
pub struct Arrival {
    /// The front door the call came through (`None`: a decision taken again at approval).
    pub front_door: Option<FrontDoor>,
    /// The client's id for this tool call (MCP `_meta`, the hook's input), logged with the
    /// decision.
    pub tool_use_id: Option<String>,
    /// How long the asking call will wait for an approver, when it waits (an MCP call's
    /// `mcp.approval_wait_seconds`): an ask's approval then expires with the wait, so its card
    /// promises no time nobody is waiting for.
    pub waits_for: Option<std::time::Duration>,
}

impl Arrival {
    /// A call at `door` that does not wait for an approver.
    pub fn at(door: FrontDoor) -> Self {
        Self {
            front_door: Some(door),
            ..Self::default()
        }
    }

    /// A decision taken again when an approval is answered: no door, nobody waiting on it.
    pub fn again() -> Self {
        Self::default()
    }
}

/// Which front door a call came through, logged with its decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrontDoor {
    Http,
    Mcp,
    Hook,
}
