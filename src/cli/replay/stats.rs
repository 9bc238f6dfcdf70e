//! cli::replay::stats: `replay --stats` — records per second, and the floor it is measured
//! against: `decide` alone on the same decoded facts, with the answer cache warm and (on a
//! sample) emptied before each decision.

use std::time::{Duration, Instant};

use crate::audit::reader::{parse_record, split_lines};
use crate::audit::record::Record;
use crate::audit::replay::LogText;
use crate::authz::CallFacts;
use crate::authz::PolicySnapshot;

/// How many decisions the cold-cache rate is measured on (each is a full Cedar evaluation).
const COLD_SAMPLE: usize = 20_000;

pub fn print(
    logs: &[LogText],
    snapshot: &PolicySnapshot,
    records: usize,
    elapsed: Duration,
    jobs: usize,
) {
    let seconds = elapsed.as_secs_f64().max(f64::MIN_POSITIVE);
    #[allow(clippy::cast_precision_loss)]
    let rate = records as f64 / seconds;
    eprintln!("replayed {records} records in {seconds:.3}s: {rate:.0} records/s on {jobs} job(s)");
    raw_decide_rate(logs, snapshot);
}

/// The same decisions' facts, already decoded, through `decide` alone on one thread.
fn raw_decide_rate(logs: &[LogText], snapshot: &PolicySnapshot) {
    let facts: Vec<CallFacts> = logs
        .iter()
        .flat_map(|log| {
            split_lines(&log.bytes)
                .filter(|line| !line.torn)
                .filter_map(|line| parse_record(line.text).ok())
        })
        .filter_map(|record| match record {
            Record::Decision(decision) => decision.facts.to_facts().ok(),
            _ => None,
        })
        .collect();
    let rate = decide_rate(&facts, snapshot, false);
    eprintln!(
        "raw decide on the same {} decisions: {:.0} decisions/s on 1 thread",
        facts.len(),
        rate
    );
    let sample = facts.get(..facts.len().min(COLD_SAMPLE)).unwrap_or(&[]);
    let cold = decide_rate(sample, snapshot, true);
    eprintln!(
        "raw decide with a cold cache on {} of them: {:.0} decisions/s on 1 thread",
        sample.len(),
        cold
    );
}

/// Decisions per second of `decide` on `facts`, emptying the answer cache first each time if `cold`.
fn decide_rate(facts: &[CallFacts], snapshot: &PolicySnapshot, cold: bool) -> f64 {
    let started = Instant::now();
    for call in facts {
        if cold {
            snapshot.cache().clear();
        }
        std::hint::black_box(crate::authz::decide(call, snapshot));
    }
    let seconds = started.elapsed().as_secs_f64().max(f64::MIN_POSITIVE);
    #[allow(clippy::cast_precision_loss)]
    let rate = facts.len() as f64 / seconds;
    rate
}
