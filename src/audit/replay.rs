//! audit::replay: re-decides every logged decision's facts and reports totals, problems, the
//! transition matrix and each changed decision — against what was logged (`replay`), or
//! between two policy sets (`compare`, the replay half of `diff`). Each record is decided on
//! the set of its own kind (live or hook-mode, `ReplaySets`), and the report says which
//! snapshots wrote the log. Pure: the caller reads the files and owns the clock; lines are
//! split across threads for speed, and the changes come in decision time order (several
//! replicas read as one), log order among equal times.

use std::collections::BTreeMap;

use serde::Serialize;

use super::chain::notes::is_log_own;
use super::reader::{decode, split_lines, LogLine, Problem, ProblemKind, RawLine};
use super::record::{ApprovalAction, DecisionRecord, FactsError, PolicySetV1, Record, Verdict};
use crate::authz::{decide, ApprovalKind, PolicySnapshot};

/// The bytes of one log file, as read by the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogText {
    pub file: String,
    pub bytes: Vec<u8>,
}

/// One side of a comparison: what was (or would now be) decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Side {
    pub decision: Verdict,
    pub approval: Option<ApprovalKind>,
    /// The other approval kinds the ask's card also gives (`Approval::also`), when decided
    /// here; a logged record does not keep them (`None`). Shown only when there are some.
    #[serde(skip_serializing_if = "no_other_kinds")]
    pub also: Option<Vec<ApprovalKind>>,
    pub policies: Vec<String>,
    pub reason: String,
}

fn no_other_kinds(also: &Option<Vec<ApprovalKind>>) -> bool {
    also.as_ref().is_none_or(Vec::is_empty)
}

/// How a changed decision changed (issue 38 §3): what a policy change does to a real call is
/// its outcome and its card, not the names of the rules that decided it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// Less strict: deny → ask, deny → allow, ask → allow.
    Looser,
    /// The same outcome, another approval card: another kind, or other kinds it also gives.
    Card,
    /// Stricter: allow → ask, allow → deny, ask → deny.
    Stricter,
    /// Only the determining policies' ids changed (a rule renamed, merged or split): the
    /// same outcome and the same card.
    Renamed,
}

impl ChangeKind {
    pub const ALL: [ChangeKind; 4] = [Self::Looser, Self::Card, Self::Stricter, Self::Renamed];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Looser => "looser",
            Self::Card => "card",
            Self::Stricter => "stricter",
            Self::Renamed => "renamed",
        }
    }

    /// Whether a change of this kind lets a call through more easily or puts another question
    /// to a human: what a merge gate must stop on.
    pub fn widens(self) -> bool {
        matches!(self, Self::Looser | Self::Card)
    }

    /// The kind of the change from `old` to `new`, or `None` when they are the same:
    /// outcome, approval card and determining policies decide sameness, reason text does not.
    fn of(old: &Side, new: &Side) -> Option<Self> {
        if old.decision != new.decision {
            // `Verdict` is ordered by strictness: allow < ask < deny.
            return Some(if new.decision < old.decision {
                Self::Looser
            } else {
                Self::Stricter
            });
        }
        let also_differs = match (&old.also, &new.also) {
            (Some(old), Some(new)) => old != new,
            _ => false,
        };
        if old.approval != new.approval || also_differs {
            return Some(Self::Card);
        }
        (old.policies != new.policies).then_some(Self::Renamed)
    }
}

/// A decision whose outcome, approval card or determining policies differ on replay.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    pub kind: ChangeKind,
    pub file: String,
    pub line_number: usize,
    pub id: String,
    pub time: String,
    pub tool: String,
    pub operation: String,
    pub project: Option<String>,
    pub old: Side,
    pub new: Side,
    /// What people answered the logged ask, in log order (issue 35 §3: who approved what).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub answers: Vec<Answered>,
}

/// One answer to a logged ask, from its approval record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Answered {
    pub action: ApprovalAction,
    pub by: String,
    pub time: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The digest of the call answered (`sha256:…`), when the record has it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call: Option<String>,
}

/// One cell of the transition matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Transition {
    pub from: Verdict,
    pub to: Verdict,
    pub count: usize,
}

/// The policy sets a log is decided on: a record of the live set on `live`, one of the
/// hook-mode set on `hook` (built from the same directories, `sources::load_hook`).
#[derive(Clone, Copy)]
pub struct ReplaySets<'a> {
    pub live: &'a PolicySnapshot,
    pub hook: &'a PolicySnapshot,
}

impl<'a> ReplaySets<'a> {
    pub fn of(&self, set: PolicySetV1) -> &'a PolicySnapshot {
        match set {
            PolicySetV1::Live => self.live,
            PolicySetV1::Hook => self.hook,
        }
    }
}

/// How many decisions of the log one snapshot of one set wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LoggedSnapshot {
    pub set: PolicySetV1,
    pub snapshot: String,
    pub decisions: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct ReplayReport {
    /// Lines that decoded to a record of any kind.
    pub records: usize,
    pub decisions: usize,
    pub changed: usize,
    /// How many changes are of each kind (every kind listed, zero or not).
    pub kinds: BTreeMap<ChangeKind, usize>,
    /// The snapshots that wrote the log's decisions, by set.
    pub logged: Vec<LoggedSnapshot>,
    pub problems: Vec<Problem>,
    /// Every old → new pair, changed or not.
    pub transitions: Vec<Transition>,
    pub changes: Vec<Change>,
}

impl ReplayReport {
    pub fn problem_counts(&self) -> BTreeMap<ProblemKind, usize> {
        let mut counts = BTreeMap::new();
        for problem in &self.problems {
            *counts.entry(problem.kind).or_insert(0) += 1;
        }
        counts
    }

    /// How many changes are of `kind`.
    pub fn count(&self, kind: ChangeKind) -> usize {
        self.kinds.get(&kind).copied().unwrap_or(0)
    }

    /// How many changes let a call through more easily or change its card.
    pub fn widened(&self) -> usize {
        ChangeKind::ALL
            .iter()
            .filter(|kind| kind.widens())
            .map(|kind| self.count(*kind))
            .sum()
    }

    /// How many decisions went from `from` to `to`.
    pub fn transition(&self, from: Verdict, to: Verdict) -> usize {
        self.transitions
            .iter()
            .find(|cell| cell.from == from && cell.to == to)
            .map_or(0, |cell| cell.count)
    }
}

/// What one thread found in its share of the lines, in line order.
#[derive(Default)]
struct Partial {
    records: usize,
    decisions: usize,
    logged: BTreeMap<(PolicySetV1, String), usize>,
    problems: Vec<Problem>,
    matrix: BTreeMap<(Verdict, Verdict), usize>,
    changes: Vec<Change>,
    /// The approval records' answers, by the decision they answer.
    answers: BTreeMap<String, Vec<Answered>>,
}

impl Partial {
    fn absorb(&mut self, other: Partial) {
        self.records += other.records;
        self.decisions += other.decisions;
        for (snapshot, count) in other.logged {
            *self.logged.entry(snapshot).or_insert(0) += count;
        }
        self.problems.extend(other.problems);
        for (cell, count) in other.matrix {
            *self.matrix.entry(cell).or_insert(0) += count;
        }
        self.changes.extend(other.changes);
        for (decision, answers) in other.answers {
            self.answers.entry(decision).or_default().extend(answers);
        }
    }
}

/// The two sides one record is compared on.
type Judge<'a> = dyn Fn(&DecisionRecord) -> Result<(Side, Side), FactsError> + Sync + 'a;

/// Replays `logs` on `sets` (each record on its own set) against what was logged, using up
/// to `jobs` threads (at least one).
pub fn replay(logs: &[LogText], sets: &ReplaySets<'_>, jobs: usize) -> ReplayReport {
    run(logs, jobs, &|record| {
        let new = decided(record, sets.of(record.policy_set))?;
        Ok((logged(record), new))
    })
}

/// Decides `logs` on `before` and on `after` (each record on its own set) and reports the
/// transitions between the two: what a policy change does to that traffic.
pub fn compare(
    logs: &[LogText],
    before: &ReplaySets<'_>,
    after: &ReplaySets<'_>,
    jobs: usize,
) -> ReplayReport {
    run(logs, jobs, &|record| {
        let old = decided(record, before.of(record.policy_set))?;
        let new = decided(record, after.of(record.policy_set))?;
        Ok((old, new))
    })
}

fn run(logs: &[LogText], jobs: usize, judge: &Judge<'_>) -> ReplayReport {
    let lines: Vec<(&str, RawLine<'_>)> = logs
        .iter()
        .flat_map(|log| split_lines(&log.bytes).map(move |line| (log.file.as_str(), line)))
        // The log's own checkpoints and chain notes are no decisions to replay.
        .filter(|(_, line)| line.torn || !is_log_own(line.text))
        .collect();
    let chunk_size = lines.len().div_ceil(jobs.max(1)).max(1);
    let mut total = Partial::default();
    std::thread::scope(|scope| {
        let workers: Vec<_> = lines
            .chunks(chunk_size)
            .map(|chunk| scope.spawn(move || replay_lines(chunk, judge)))
            .collect();
        for worker in workers {
            match worker.join() {
                Ok(partial) => total.absorb(partial),
                Err(_) => total.problems.push(Problem {
                    file: String::new(),
                    line_number: 0,
                    kind: ProblemKind::Malformed,
                    message: "a replay worker stopped unexpectedly".to_string(),
                    text_prefix: String::new(),
                }),
            }
        }
    });
    // Several replicas' logs read as one: by decision time, log order among equal times.
    total
        .changes
        .sort_by(|one, other| one.time.cmp(&other.time));
    for change in &mut total.changes {
        if let Some(mut answers) = total.answers.remove(&change.id) {
            answers.sort_by(|one, other| one.time.cmp(&other.time));
            change.answers = answers;
        }
    }
    finish(total)
}

fn finish(total: Partial) -> ReplayReport {
    let transitions = Verdict::ALL
        .iter()
        .flat_map(|from| Verdict::ALL.iter().map(move |to| (*from, *to)))
        .map(|(from, to)| Transition {
            from,
            to,
            count: total.matrix.get(&(from, to)).copied().unwrap_or(0),
        })
        .collect();
    let logged = total
        .logged
        .into_iter()
        .map(|((set, snapshot), decisions)| LoggedSnapshot {
            set,
            snapshot,
            decisions,
        })
        .collect();
    let mut kinds: BTreeMap<ChangeKind, usize> =
        ChangeKind::ALL.iter().map(|kind| (*kind, 0)).collect();
    for change in &total.changes {
        *kinds.entry(change.kind).or_insert(0) += 1;
    }
    ReplayReport {
        records: total.records,
        decisions: total.decisions,
        changed: total.changes.len(),
        kinds,
        logged,
        problems: total.problems,
        transitions,
        changes: total.changes,
    }
}

fn replay_lines(lines: &[(&str, RawLine<'_>)], judge: &Judge<'_>) -> Partial {
    let mut partial = Partial::default();
    for (file, line) in lines {
        match decode(file, *line) {
            LogLine::Problem(problem) => partial.problems.push(problem),
            LogLine::Record(Record::Decision(record)) => {
                partial.records += 1;
                partial.decisions += 1;
                let written = (record.policy_set, record.snapshot.clone());
                *partial.logged.entry(written).or_insert(0) += 1;
                let (old, new) = match judge(&record) {
                    Ok(sides) => sides,
                    Err(error) => {
                        partial.problems.push(undecidable(file, *line, &error));
                        continue;
                    }
                };
                *partial
                    .matrix
                    .entry((old.decision, new.decision))
                    .or_insert(0) += 1;
                if let Some(kind) = ChangeKind::of(&old, &new) {
                    let at = (*file, line.line_number);
                    partial.changes.push(change(kind, at, *record, old, new));
                }
            }
            LogLine::Record(Record::Approval(record)) => {
                partial.records += 1;
                let answer = Answered {
                    action: record.action,
                    by: record.by,
                    time: record.time,
                    note: record.note,
                    call: record.call,
                };
                partial
                    .answers
                    .entry(record.decision_id)
                    .or_default()
                    .push(answer);
            }
            LogLine::Record(_) => partial.records += 1,
        }
    }
    partial
}

/// A decision record whose logged facts cannot be decided on again.
fn undecidable(file: &str, line: RawLine<'_>, error: &FactsError) -> Problem {
    Problem {
        file: file.to_string(),
        line_number: line.line_number,
        kind: ProblemKind::Malformed,
        message: error.to_string(),
        text_prefix: String::new(),
    }
}

/// What the record says was decided.
fn logged(record: &DecisionRecord) -> Side {
    Side {
        decision: record.decision,
        approval: record.approval.map(Into::into),
        also: None,
        policies: record.policies.clone(),
        reason: record.reason.clone(),
    }
}

/// What `snapshot` decides on the record's facts now.
pub fn decided(record: &DecisionRecord, snapshot: &PolicySnapshot) -> Result<Side, FactsError> {
    let decision = decide(&record.facts.to_facts()?, snapshot);
    Ok(Side {
        decision: decision.decision.into(),
        approval: decision.approval.as_ref().map(|card| card.kind()),
        also: Some(
            decision
                .approval
                .as_ref()
                .map_or_else(Vec::new, |card| card.also().to_vec()),
        ),
        policies: decision.policies,
        reason: decision.reason,
    })
}

fn change(
    kind: ChangeKind,
    (file, line_number): (&str, usize),
    record: DecisionRecord,
    old: Side,
    new: Side,
) -> Change {
    Change {
        kind,
        file: file.to_string(),
        line_number,
        id: record.id,
        time: record.time,
        tool: record.tool,
        operation: record.operation,
        project: record.project,
        old,
        new,
        answers: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::record::DecisionOrigin;
    use crate::authz::baseline;
    use crate::scenario::run::gather;
    use crate::scenario::Scenario;

    fn snapshot() -> PolicySnapshot {
        PolicySnapshot::load(&baseline::schema_source(), &baseline::policy_sources()).unwrap()
    }

    fn sets(snapshot: &PolicySnapshot) -> ReplaySets<'_> {
        ReplaySets {
            live: snapshot,
            hook: snapshot,
        }
    }

    /// A log of `count` project_delete decisions, every third one logged as `deny`.
    fn log(count: usize, snapshot: &PolicySnapshot) -> LogText {
        let scenario: Scenario = serde_json::from_value(serde_json::json!({
            "now": "2026-11-30T10:00:00Z",
            "environment": {"attached_project": "p1", "session_token": true},
            "state": {"projects": {"scopes": [], "knowledge_size": 0, "max_knowledge_size": 1000,
                                   "docs": [{"path": "a.md"}], "files": []}},
            "call": {"tool": "Projects", "input": {"method": "project_delete", "path": "a.md"}}
        }))
        .unwrap();
        let facts = gather(&scenario).unwrap().unwrap();
        let decision = decide(&facts, snapshot);
        let mut bytes = Vec::new();
        for index in 0..count {
            let origin = DecisionOrigin {
                id: format!("d{index}"),
                time: time::macros::datetime!(2026-11-30 10:00 UTC),
                account: "a".to_string(),
                session: "s".to_string(),
                tool_use_id: None,
            };
            let mut record = DecisionRecord::new(origin, &facts, &decision).unwrap();
            if index % 3 == 0 {
                record.decision = Verdict::Deny;
            }
            bytes.extend(Record::Decision(Box::new(record)).to_line().unwrap());
        }
        LogText {
            file: "log".to_string(),
            bytes,
        }
    }

    #[test]
    fn an_empty_log_has_a_full_zero_matrix() {
        let snapshot = snapshot();
        let report = replay(&[], &sets(&snapshot), 0);
        assert_eq!((report.records, report.changed), (0, 0));
        assert_eq!(report.transitions.len(), 9);
        assert!(report.transitions.iter().all(|cell| cell.count == 0));
    }

    #[test]
    fn changes_keep_log_order_whatever_the_job_count() {
        let snapshot = snapshot();
        let logs = [log(10, &snapshot)];
        let one = replay(&logs, &sets(&snapshot), 1);
        assert_eq!(one.transition(Verdict::Deny, Verdict::Allow), 4);
        assert_eq!(one.transition(Verdict::Allow, Verdict::Allow), 6);
        assert_eq!(one.changed, 4);
        let lines: Vec<usize> = one.changes.iter().map(|c| c.line_number).collect();
        assert_eq!(lines, vec![1, 4, 7, 10]);
        for jobs in [2, 3, 7, 64] {
            assert_eq!(replay(&logs, &sets(&snapshot), jobs), one, "{jobs} jobs");
        }
    }

    fn side(decision: Verdict, approval: Option<ApprovalKind>, policies: &[&str]) -> Side {
        Side {
            decision,
            approval,
            also: Some(Vec::new()),
            policies: policies.iter().map(ToString::to_string).collect(),
            reason: "why".to_string(),
        }
    }

    #[test]
    fn i38_a_change_is_looser_stricter_another_card_or_only_renamed() {
        use ApprovalKind::{Batch, Grant};
        use Verdict::{Allow, Ask, Deny};
        let kind = |old: &Side, new: &Side| ChangeKind::of(old, new);
        let ask = side(Ask, Some(Batch), &["a.ask"]);
        assert_eq!(
            kind(&side(Deny, None, &["a"]), &ask),
            Some(ChangeKind::Looser)
        );
        assert_eq!(
            kind(&ask, &side(Allow, None, &["p"])),
            Some(ChangeKind::Looser)
        );
        assert_eq!(
            kind(&ask, &side(Deny, None, &["f"])),
            Some(ChangeKind::Stricter)
        );
        assert_eq!(
            kind(&side(Allow, None, &["p"]), &ask),
            Some(ChangeKind::Stricter)
        );
        assert_eq!(
            kind(&ask, &side(Ask, Some(Grant), &["a.ask"])),
            Some(ChangeKind::Card)
        );
        let mut more = ask.clone();
        more.also = Some(vec![Grant]);
        assert_eq!(kind(&ask, &more), Some(ChangeKind::Card));
        assert_eq!(
            kind(&ask, &side(Ask, Some(Batch), &["b.ask"])),
            Some(ChangeKind::Renamed)
        );
        let mut reworded = ask.clone();
        reworded.reason = "another sentence".to_string();
        assert_eq!(kind(&ask, &reworded), None);
        // A logged side does not keep `also`: only the approval kind is compared with it.
        let mut logged = ask.clone();
        logged.also = None;
        assert_eq!(kind(&logged, &more), None);
        assert!(ChangeKind::Looser.widens() && ChangeKind::Card.widens());
        assert!(!ChangeKind::Stricter.widens() && !ChangeKind::Renamed.widens());
    }
}
