//! analysis::answer: what askgate answers one request — allow, ask with its approval kind,
//! deny — as the analysis compares it between two policy sets, its number in the solver's
//! questions, and the kind of change a pair of answers is. It must not evaluate anything.

use serde::{Serialize, Serializer};

use crate::authz::{ApprovalKind, Decision, Outcome};

/// askgate's answer to one request: the outcome and, for an ask, the approval it asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Answer {
    Allow,
    Ask(ApprovalKind),
    Deny,
}

impl Answer {
    /// Every answer, in the order of their numbers.
    pub const ALL: [Answer; 6] = [
        Answer::Allow,
        Answer::Deny,
        Answer::Ask(ApprovalKind::Consent),
        Answer::Ask(ApprovalKind::Grant),
        Answer::Ask(ApprovalKind::Plan),
        Answer::Ask(ApprovalKind::Batch),
    ];

    /// The answer's number in the solver's questions (`outcome`), 0–5.
    pub fn code(self) -> i64 {
        match self {
            Self::Allow => 0,
            Self::Deny => 1,
            Self::Ask(ApprovalKind::Consent) => 2,
            Self::Ask(ApprovalKind::Grant) => 3,
            Self::Ask(ApprovalKind::Plan) => 4,
            Self::Ask(ApprovalKind::Batch) => 5,
        }
    }

    /// The answer of a decision (an ask without a card cannot happen: it is a deny).
    pub fn of(decision: &Decision) -> Self {
        match (decision.decision, &decision.approval) {
            (Outcome::Allow, _) => Self::Allow,
            (Outcome::Ask, Some(card)) => Self::Ask(card.kind()),
            (Outcome::Ask, None) | (Outcome::Deny, _) => Self::Deny,
        }
    }

    pub fn outcome(self) -> Outcome {
        match self {
            Self::Allow => Outcome::Allow,
            Self::Ask(_) => Outcome::Ask,
            Self::Deny => Outcome::Deny,
        }
    }

    /// `allow`, `ask (grant)`, `deny`.
    pub fn label(self) -> String {
        match self {
            Self::Ask(kind) => format!("ask ({})", kind.as_str()),
            other => other.outcome().as_str().to_string(),
        }
    }
}

impl Serialize for Answer {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.label())
    }
}

/// The kind of change a pair of answers shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    NewlyAllowed,
    NewlyAskable,
    NewlyStricter,
}

impl Category {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NewlyAllowed => "newly allowed without a human",
            Self::NewlyAskable => "newly askable",
            Self::NewlyStricter => "newly stricter",
        }
    }

    /// The category of `before → after`, `None` when they are the same answer. An ask that
    /// now asks for an approval that does more (batch < plan < grant < consent: this call,
    /// these paths for 15 minutes, the whole project, the account) is newly askable.
    pub fn of(before: Answer, after: Answer) -> Option<Self> {
        use Answer::{Allow, Ask, Deny};
        match (before, after) {
            _ if before == after => None,
            (_, Allow) => Some(Self::NewlyAllowed),
            (Deny, Ask(_)) => Some(Self::NewlyAskable),
            (Ask(old), Ask(new)) if scope(new) > scope(old) => Some(Self::NewlyAskable),
            _ => Some(Self::NewlyStricter),
        }
    }

    /// Whether the change widens what an agent may do (the exit-5 categories).
    pub fn widens(self) -> bool {
        self != Self::NewlyStricter
    }
}

/// How much an approval of `kind` lets happen.
fn scope(kind: ApprovalKind) -> u8 {
    match kind {
        ApprovalKind::Batch => 0,
        ApprovalKind::Plan => 1,
        ApprovalKind::Grant => 2,
        ApprovalKind::Consent => 3,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_distinct_and_categories_follow_the_tri_state() {
        let codes: std::collections::BTreeSet<i64> = Answer::ALL.iter().map(|a| a.code()).collect();
        assert_eq!(codes.len(), 6);
        let batch = Answer::Ask(ApprovalKind::Batch);
        let grant = Answer::Ask(ApprovalKind::Grant);
        assert_eq!(
            Category::of(Answer::Deny, batch),
            Some(Category::NewlyAskable)
        );
        assert_eq!(
            Category::of(batch, Answer::Allow),
            Some(Category::NewlyAllowed)
        );
        assert_eq!(Category::of(batch, grant), Some(Category::NewlyAskable));
        assert_eq!(Category::of(grant, batch), Some(Category::NewlyStricter));
        assert_eq!(
            Category::of(batch, Answer::Deny),
            Some(Category::NewlyStricter)
        );
        assert_eq!(Category::of(grant, grant), None);
        assert_eq!(grant.label(), "ask (grant)");
    }
}
