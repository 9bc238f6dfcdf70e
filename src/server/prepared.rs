//! server::prepared: a call after validation and fact gathering, ready to decide — what the
//! gateway decides on, the decision log records and an approval holds — and the front door it
//! came through.

use std::sync::Arc;

use crate::authz::{CallFacts, PolicySnapshot};
use crate::facts::observations::LocalFileStat;
use crate::state::SessionKey;
use crate::store::approvals::ApprovedCall;

/// A call after validation and fact gathering, ready to decide.
pub struct Prepared {
    pub decision_id: String,
    /// Whose session: the caller's principal and the session id (plans are kept per key).
    pub session_key: SessionKey,
    pub session: crate::facts::Session,
    pub call: ApprovedCall,
    pub facts: CallFacts,
    /// The `local_path` file the decision saw; the executor reads only that same file.
    pub local_file: Option<LocalFileStat>,
    /// The client's id for this tool call (MCP `_meta`), logged with the decision.
    pub tool_use_id: Option<String>,
    /// How long the asking call will wait for an approver, when it waits (an MCP call's
    /// `mcp.approval_wait_seconds`): an ask's approval then expires with the wait, so its card
    /// promises no time nobody is waiting for.
    pub waits_for: Option<std::time::Duration>,
    /// The front door the call came through (`None`: a decision taken again at approval).
    pub front_door: Option<FrontDoor>,
    /// The policy set the call is decided on: the one its gates were checked on, loaded once
    /// when the call came in.
    pub snapshot: Arc<PolicySnapshot>,
    /// The shadow set of the same generation (`server::policies`), compared beside it.
    pub shadow: Option<Arc<PolicySnapshot>>,
}

/// Which front door a call came through, logged with its decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrontDoor {
    Http,
    Mcp,
    Hook,
}
