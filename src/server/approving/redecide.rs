//! server::approving::redecide: what the decision taken again at the moment of approval
//! means for the approved work. Pure: it reads the new decision and the card the human
//! approved, and says whether the call may run and with which approvals. It decides nothing
//! itself — the policies did — it only holds the approval to what the human saw.

use crate::authz::{Approval, ApprovalKind, Decision, Outcome};

/// What the approved work may do after the re-decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Run the call with the approvals the human gave (their follow-ups included).
    Run(Vec<ApprovalKind>),
    /// Do not run it: the error kind and the message the agent and approver see.
    Refuse { kind: &'static str, message: String },
}

/// The call runs when the policies now allow it, or ask for the very card the human approved
/// (same kind and content, no approval kind the human did not give). A deny, or an ask for
/// something else (another kind, or a card that changed, e.g. a project's sharing), refuses.
pub fn judge(decision: &Decision, approved: &Approval, given: &[ApprovalKind]) -> Verdict {
    match (decision.decision, decision.approval.as_ref()) {
        (Outcome::Allow, _) => Verdict::Run(given.to_vec()),
        (Outcome::Ask, Some(card)) if same_card(card, approved) && also_given(card, given) => {
            Verdict::Run(given.to_vec())
        }
        (Outcome::Ask, Some(card)) => Verdict::Refuse {
            kind: "approval_mismatch",
            message: format!(
                "decided again when approved, the call now asks for a `{}` approval ({}), not the `{}` approval that was given: ask again",
                card.kind().as_str(),
                decision.reason,
                approved.kind().as_str()
            ),
        },
        (Outcome::Ask | Outcome::Deny, _) => Verdict::Refuse {
            kind: "denied_at_approval",
            message: format!(
                "decided again when approved, the call is now denied: {}",
                decision.reason
            ),
        },
    }
}

/// The same card but for the other kinds it also gives (compared by `also_given`).
fn same_card(now: &Approval, approved: &Approval) -> bool {
    without_also(now) == without_also(approved)
}

fn also_given(card: &Approval, given: &[ApprovalKind]) -> bool {
    card.also().iter().all(|kind| given.contains(kind))
}

fn without_also(card: &Approval) -> Approval {
    let mut card = card.clone();
    match &mut card {
        Approval::Consent { also, .. }
        | Approval::Grant { also, .. }
        | Approval::Plan { also, .. }
        | Approval::Batch { also, .. } => also.clear(),
    }
    card
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authz::requests::Requests;

    fn batch(targets: &[&str], also: Vec<ApprovalKind>) -> Approval {
        Approval::Batch {
            tool: "ClaudeDesign".into(),
            operation: "delete_files".into(),
            project_id: Some("p1".into()),
            targets: targets.iter().map(|t| t.to_string()).collect(),
            writes: Vec::new(),
            deletes: Vec::new(),
            message: "m".into(),
            scope: "this call only".into(),
            also,
        }
    }

    fn decision(outcome: Outcome, approval: Option<Approval>) -> Decision {
        Decision {
            decision: outcome,
            reason: "the reason".into(),
            policies: Vec::new(),
            approval,
            errors: Vec::new(),
            target_policies: Vec::new(),
            blocked_targets: Vec::new(),
            snapshot: "sha256:0".into(),
            requests: Requests::default(),
            step_up: Vec::new(),
            rate_limited: false,
        }
    }

    #[test]
    fn the_same_ask_or_an_allow_runs_with_the_given_approvals() {
        let card = batch(&["a"], vec![]);
        let given = [ApprovalKind::Batch];
        let asked = decision(Outcome::Ask, Some(card.clone()));
        assert_eq!(judge(&asked, &card, &given), Verdict::Run(given.to_vec()));
        let allowed = decision(Outcome::Allow, None);
        assert_eq!(judge(&allowed, &card, &given), Verdict::Run(given.to_vec()));
    }

    #[test]
    fn a_deny_refuses_with_its_reason() {
        let card = batch(&["a"], vec![]);
        let Verdict::Refuse { kind, message } = judge(
            &decision(Outcome::Deny, None),
            &card,
            &[ApprovalKind::Batch],
        ) else {
            panic!("must refuse");
        };
        assert_eq!(kind, "denied_at_approval");
        assert!(message.ends_with("now denied: the reason"), "{message}");
    }

    #[test]
    fn another_kind_a_changed_card_or_an_extra_kind_refuses() {
        let card = batch(&["a"], vec![]);
        let given = [ApprovalKind::Batch];
        let changed = decision(Outcome::Ask, Some(batch(&["b"], vec![])));
        let extra = decision(
            Outcome::Ask,
            Some(batch(&["a"], vec![ApprovalKind::Consent])),
        );
        for asked in [changed, extra] {
            let verdict = judge(&asked, &card, &given);
            assert!(
                matches!(
                    verdict,
                    Verdict::Refuse {
                        kind: "approval_mismatch",
                        ..
                    }
                ),
                "{verdict:?}"
            );
        }
    }
}
