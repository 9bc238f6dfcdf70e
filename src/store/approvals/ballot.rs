//! store::approvals::ballot: the votes an approval keeps — who answered, which way, when and
//! with what note — and what they add up to against its quorum (the `@quorum` of the policies
//! that asked). It only counts: who may vote is `approving::routing`'s, and the books record
//! a vote and claim the approval in one step (`ApprovalBook::vote`).

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

pub use crate::authz::approving::Vote;
use crate::authz::load::MAX_QUORUM;

/// The most votes one approval keeps: one approval from each of at most [`MAX_QUORUM`]
/// approvers, then the refusal that may end it.
// INVARIANT: the books append an approval only while fewer than `quorum` are counted (the one
// that completes it claims the approval) and a refusal only as it ends the approval, so a
// view never holds more than this.
pub const MAX_VOTES: usize = MAX_QUORUM as usize + 1;

/// One approver's answer, as the approval keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ballot {
    /// The approver's principal.
    pub by: String,
    pub vote: Vote,
    #[serde(with = "time::serde::rfc3339")]
    pub at: OffsetDateTime,
    /// The approver's note (checked before it gets here: `approving::approval_note`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Ballot {
    pub fn new(by: &str, vote: Vote, at: OffsetDateTime, note: Option<String>) -> Ballot {
        Ballot {
            by: by.to_string(),
            vote,
            at,
            note,
        }
    }
}

/// The approvals among `votes`.
pub fn approvals_given(votes: &[Ballot]) -> usize {
    votes
        .iter()
        .filter(|ballot| ballot.vote == Vote::Approve)
        .count()
}

/// Whether `by` has already approved.
pub fn has_approved(votes: &[Ballot], by: &str) -> bool {
    votes
        .iter()
        .any(|ballot| ballot.vote == Vote::Approve && ballot.by == by)
}

/// `1 of 2 approvals`: what every surface says of a quorum.
pub fn tally(votes: &[Ballot], quorum: u8) -> String {
    let noun = if quorum == 1 { "approval" } else { "approvals" };
    format!("{} of {quorum} {noun}", approvals_given(votes))
}
