//! audit::fatigue: approval fatigue read off the decision log (issue 35 §4) — which asks people
//! answer, how, and by whom. Asks are grouped by what they ask for (tool, operation, project,
//! card kind, the policies that asked); each group counts its asks and how their approvals
//! ended, from the log's approval records. A group approved every time (at least a minimum
//! of answered asks, none refused) comes with the change that would stop asking, named from
//! the numbers. Pure: records in, groups out.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde::Serialize;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use super::record::{ApprovalAction, Record, Verdict};
use crate::authz::ApprovalKind;

/// What an ask asks for: the group's key.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Asked {
    pub tool: String,
    pub operation: String,
    pub project: Option<String>,
    /// The card's kind (`consent`, `grant`, `plan`, `batch`).
    pub card: String,
    /// The determining policies of the ask, sorted.
    pub policies: Vec<String>,
}

/// One group of asks and how they ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AskGroup {
    #[serde(flatten)]
    pub asked: Asked,
    pub asks: usize,
    pub approved: usize,
    pub refused: usize,
    /// Expired or withdrawn: nobody answered in time, or the asking call stopped waiting.
    pub unanswered: usize,
    /// Asks with no ending in the logs read (still pending, or the approval was never held).
    pub open: usize,
    /// Who approved (a vote towards a quorum counts), and how often.
    pub approvers: BTreeMap<String, usize>,
    pub first: String,
    pub last: String,
    /// The change that would stop asking, when the group is approved every time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<String>,
}

impl AskGroup {
    /// Answered by a person (approved or refused).
    pub fn answered(&self) -> usize {
        self.approved + self.refused
    }

    /// Approved every time it was answered, and answered at least `min` times.
    pub fn approved_every_time(&self, min: usize) -> bool {
        self.refused == 0 && self.approved >= min.max(1)
    }

    /// `bob 12, dana 3`, most approvals first.
    pub fn approvers_line(&self) -> String {
        let mut approvers: Vec<(&String, &usize)> = self.approvers.iter().collect();
        approvers.sort_by(|one, other| other.1.cmp(one.1).then(one.0.cmp(other.0)));
        approvers
            .iter()
            .map(|(by, count)| format!("{by} {count}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// How one approval ended, from its records.
#[derive(Default)]
struct Ending {
    action: Option<ApprovalAction>,
    approvers: BTreeSet<String>,
}

/// The groups of asks in `records` (decided at or after `since`, when given: a record whose
/// time cannot be read is then left out), most approvals first; a group approved every time
/// at least `min` times carries a suggestion.
pub fn fatigue(records: &[Record], since: Option<OffsetDateTime>, min: usize) -> Vec<AskGroup> {
    // Each approval's records in log order: its first names the ask's decision; any later
    // decision it names is a re-decision (not an ask of its own).
    let mut ask_of: HashMap<&str, &str> = HashMap::new();
    let mut redecisions: HashSet<&str> = HashSet::new();
    let mut endings: HashMap<&str, Ending> = HashMap::new();
    for record in records {
        let Record::Approval(answer) = record else {
            continue;
        };
        let ask = *ask_of
            .entry(answer.approval_id.as_str())
            .or_insert(answer.decision_id.as_str());
        if ask != answer.decision_id {
            redecisions.insert(answer.decision_id.as_str());
        }
        let ending = endings.entry(ask).or_default();
        match answer.action {
            ApprovalAction::Voted => {
                ending.approvers.insert(answer.by.clone());
            }
            ApprovalAction::Approved => {
                ending.approvers.insert(answer.by.clone());
                ending.action = Some(ApprovalAction::Approved);
            }
            action => ending.action = Some(action),
        }
    }
    let mut groups: BTreeMap<Asked, AskGroup> = BTreeMap::new();
    for record in records {
        let Record::Decision(decision) = record else {
            continue;
        };
        let is_ask =
            decision.decision == Verdict::Ask && !redecisions.contains(decision.id.as_str());
        let before_since = since.is_some_and(|since| {
            OffsetDateTime::parse(&decision.time, &Rfc3339).map_or(true, |time| time < since)
        });
        if !is_ask || before_since {
            continue;
        }
        let mut policies = decision.policies.clone();
        policies.sort();
        let asked = Asked {
            tool: decision.tool.clone(),
            operation: decision.operation.clone(),
            project: decision.project.clone(),
            card: decision
                .approval
                .map_or("none", |kind| ApprovalKind::from(kind).as_str())
                .to_string(),
            policies,
        };
        let group = groups.entry(asked.clone()).or_insert_with(|| AskGroup {
            asked,
            asks: 0,
            approved: 0,
            refused: 0,
            unanswered: 0,
            open: 0,
            approvers: BTreeMap::new(),
            first: decision.time.clone(),
            last: decision.time.clone(),
            suggestion: None,
        });
        group.asks += 1;
        group.first = group.first.clone().min(decision.time.clone());
        group.last = group.last.clone().max(decision.time.clone());
        let ending = endings.get(decision.id.as_str());
        match ending.and_then(|ending| ending.action) {
            Some(ApprovalAction::Approved) => group.approved += 1,
            Some(ApprovalAction::Refused) => group.refused += 1,
            Some(ApprovalAction::Expired | ApprovalAction::Withdrawn) => group.unanswered += 1,
            Some(ApprovalAction::Voted) | None => group.open += 1,
        }
        if let Some(ending) =
            ending.filter(|ending| ending.action == Some(ApprovalAction::Approved))
        {
            for by in &ending.approvers {
                *group.approvers.entry(by.clone()).or_insert(0) += 1;
            }
        }
    }
    let mut groups: Vec<AskGroup> = groups.into_values().collect();
    for group in &mut groups {
        group.suggestion = group.approved_every_time(min).then(|| suggestion(group));
    }
    groups.sort_by(|one, other| {
        (other.approved, other.asks)
            .cmp(&(one.approved, one.asks))
            .then(one.asked.cmp(&other.asked))
    });
    groups
}

/// What would stop a group approved every time from asking, by the kind of its card.
fn suggestion(group: &AskGroup) -> String {
    let asked = &group.asked;
    let project = asked.project.as_deref().unwrap_or("(no project)");
    let counted = format!(
        "approved {} of {} times, never refused ({})",
        group.approved,
        group.answered(),
        group.approvers_line()
    );
    match asked.card.as_str() {
        "consent" => format!(
            "{counted}: consent is durable per account once approved, so asking again means it \
             was revoked in between (`POST /v1/design/revoke`); keep it connected instead"
        ),
        "grant" => format!(
            "{counted}: a project write grant is durable once approved, so asking again on \
             {project} means the grant was revoked in between or the project cannot hold one \
             (shared from elsewhere); keep the grant, or have the agent write under a plan"
        ),
        "plan" => format!(
            "{counted}: each plan is approved once and then covers its paths for its life; \
             fewer, larger plans (one finalize_plan for the whole change) ask less often"
        ),
        _ => format!(
            "{counted}: to stop asking for {} {} on {project}, have the agent write under an \
             approved plan (finalize_plan covers its writes and deletes for 15 minutes), or \
             lift the ask in a baseline copy (`--baseline DIR`) of {} for this operation and \
             project, checked with `askgate diff` before it is deployed",
            asked.tool,
            asked.operation,
            asked.policies.join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::record::{ApprovalRecord, DecisionRecord};

    /// An ask of the committed v2 fixture, given `id` and `time`.
    fn ask(id: &str, time: &str) -> Record {
        let fixture = include_str!("../../tests/fixtures/log-v2/corpus/decisions-000001.jsonl");
        let line = fixture
            .lines()
            .find(|line| line.contains(r#""decision":"ask""#))
            .unwrap_or_default();
        let mut record: DecisionRecord =
            serde_json::from_str(line).unwrap_or_else(|error| panic!("{error}"));
        record.id = id.to_string();
        record.time = time.to_string();
        Record::Decision(Box::new(record))
    }

    fn answer(decision: &str, approval: &str, action: ApprovalAction, by: &str) -> Record {
        Record::Approval(ApprovalRecord {
            v: crate::audit::record::Version::CURRENT,
            kind: Default::default(),
            id: format!("{decision}-{by}"),
            time: "2026-12-06T10:00:09.000Z".to_string(),
            decision_id: decision.to_string(),
            approval_id: approval.to_string(),
            action,
            by: by.to_string(),
            note: None,
            call: None,
        })
    }

    /// `--since` compares times, not text: a record at 10:00:00.123Z is after 10:00:00Z (as
    /// text, `.` sorts before `Z`), and an offset is honoured.
    #[test]
    fn since_compares_times_and_a_redecision_is_no_ask_of_its_own() {
        let records = vec![
            ask("d1", "2026-12-06T10:00:00.123Z"),
            answer("d1", "ap1", ApprovalAction::Voted, "bob"),
            answer("d1", "ap1", ApprovalAction::Approved, "dana"),
            ask("d2", "2026-12-06T10:00:01.000Z"),
            answer("d2", "ap1", ApprovalAction::Approved, "dana"),
            ask("d0", "2026-12-06T09:59:59.999Z"),
        ];
        let since = OffsetDateTime::parse("2026-12-06T11:00:00+01:00", &Rfc3339).ok();
        let groups = fatigue(&records, since, 1);
        assert_eq!(groups.len(), 1, "{groups:?}");
        let group = &groups[0];
        assert_eq!(
            (group.asks, group.approved, group.open),
            (1, 1, 0),
            "{group:?}"
        );
        assert_eq!(group.approvers_line(), "bob 1, dana 1");
        assert!(group.suggestion.is_some());
        let all = fatigue(&records, None, 1);
        assert_eq!((all[0].asks, all[0].open), (2, 1), "{all:?}");
    }
}
