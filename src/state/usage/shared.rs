//! state::usage::shared: a fleet replica's side of the usage counts (issue 36 §2). What this
//! replica counted and has not handed to the store yet ([`Shared::take`]: one [`Row`] delta
//! per principal, scale and bucket), and what the other replicas counted, as the store last
//! showed their rows ([`Shared::apply`]: absolute buckets, so reading a row twice changes
//! nothing). A store task (`store::postgres::usage`) exchanges both every [`EVERY`] and says
//! when it last did ([`Shared::synced`]); the counts are fresh for [`super::STALE_AFTER`]
//! seconds after that. Bounded: [`OUTBOX`] deltas waiting (past it they are dropped: the store
//! has been away for seconds, so the counts read unknown anyway), [`super::MAX_PRINCIPALS`]
//! principals of the others, [`REPLICAS`] replicas each.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use dashmap::DashMap;

use super::{Scale, UsageFacts, KINDS, MAX_PRINCIPALS, MAX_SESSIONS, RECENT, SESSION_WIDTH};

/// How often a replica exchanges its counts with the store.
pub const EVERY: Duration = Duration::from_secs(1);
/// Deltas waiting for the store at most.
pub const OUTBOX: usize = 100_000;
/// Other replicas kept per principal.
pub const REPLICAS: usize = 64;

/// The widths of the three scales, in seconds (their buckets: 60, 60 and 24 slots); a
/// session's calls go in buckets of [`SESSION_WIDTH`] (12 slots).
pub const WIDTHS: [i64; 3] = [1, 60, 3_600];

/// One bucket of one principal's counts at one scale, as the store keeps it (`usage_counts`):
/// a delta on the way out, the replica's absolute bucket on the way in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The replica that counted it ("" on the way out: the store names this replica).
    pub replica: String,
    pub principal: String,
    /// The scale's bucket width in seconds: one of [`WIDTHS`], or [`SESSION_WIDTH`] for a
    /// session's calls (`principal` is then the session's key).
    pub width: i64,
    pub bucket: i64,
    /// Calls, writes, deleted paths, asks, refusals, bytes uploaded (a session's row: calls).
    pub counts: [u32; KINDS],
    /// The shapes of the calls in this bucket (the one-second scale only; at most [`RECENT`]).
    pub shapes: Vec<u64>,
}

impl Row {
    /// The slot of its scale's ring the bucket falls in.
    pub fn slot(&self) -> i32 {
        let slots = match self.width {
            3_600 => 24,
            SESSION_WIDTH => 12,
            _ => 60,
        };
        i32::try_from(self.bucket.rem_euclid(slots)).unwrap_or(0)
    }
}

/// What another replica counted for one principal.
#[derive(Debug)]
struct Remote {
    minute: Scale<60>,
    hour: Scale<60>,
    day: Scale<24>,
    /// Per one-second slot: its bucket and the shapes of its calls.
    shapes: Vec<(i64, Vec<u64>)>,
}

impl Remote {
    fn new() -> Self {
        Self {
            minute: Scale::new(1),
            hour: Scale::new(60),
            day: Scale::new(3_600),
            shapes: vec![(i64::MIN, Vec::new()); 60],
        }
    }

    fn set(&mut self, row: &Row) {
        let slot = usize::try_from(row.slot()).unwrap_or(0);
        match row.width {
            1 => {
                self.minute.set(slot, row.bucket, row.counts);
                if let Some(held) = self.shapes.get_mut(slot) {
                    if row.bucket >= held.0 {
                        *held = (row.bucket, row.shapes.clone());
                    }
                }
            }
            60 => self.hour.set(slot, row.bucket, row.counts),
            3_600 => self.day.set(slot, row.bucket, row.counts),
            _ => {}
        }
    }

    fn facts(&self, shape: u64, now: i64) -> UsageFacts {
        let identical: usize = self
            .shapes
            .iter()
            .filter(|(bucket, _)| *bucket <= now && now.saturating_sub(*bucket) < 60)
            .map(|(_, shapes)| shapes.iter().filter(|seen| **seen == shape).count())
            .sum();
        super::totals((&self.minute, &self.hour, &self.day), identical, now)
    }
}

/// The other replicas' counts under one key (a principal's windows, or a session's calls:
/// `R`), each replica's apart, and when they last changed.
#[derive(Debug)]
struct Others<R> {
    replicas: Vec<(String, R)>,
    last_seen: i64,
}

/// The others' calls of one session: five-minute buckets.
type SessionScale = Scale<12, 1>;

/// A replica's side of the fleet's counts.
#[derive(Debug)]
pub struct Shared {
    /// Deltas not yet in the store, by (principal, width, bucket).
    outbox: Mutex<HashMap<(String, i64, i64), Row>>,
    others: DashMap<String, Mutex<Others<Remote>>>,
    /// The others' session calls, by session key (at most [`MAX_SESSIONS`]).
    sessions: DashMap<String, Mutex<Others<SessionScale>>>,
    /// When (unix seconds, this replica's clock) the last exchange with the store succeeded.
    synced_at: AtomicI64,
}

impl Default for Shared {
    fn default() -> Self {
        Self {
            outbox: Mutex::new(HashMap::new()),
            others: DashMap::new(),
            sessions: DashMap::new(),
            synced_at: AtomicI64::new(i64::MIN),
        }
    }
}

impl Shared {
    /// One call of this replica, to be handed to the store.
    pub(super) fn outgoing(&self, principal: &str, now: i64, amounts: [u32; KINDS], shape: u64) {
        let mut outbox = self.outbox.lock().unwrap_or_else(PoisonError::into_inner);
        for width in WIDTHS {
            let bucket = now.div_euclid(width);
            let key = (principal.to_string(), width, bucket);
            if !outbox.contains_key(&key) && outbox.len() >= OUTBOX {
                return;
            }
            let row = outbox.entry(key).or_insert_with(|| Row {
                replica: String::new(),
                principal: principal.to_string(),
                width,
                bucket,
                counts: [0; KINDS],
                shapes: Vec::new(),
            });
            for (count, amount) in row.counts.iter_mut().zip(amounts) {
                *count = count.saturating_add(amount);
            }
            if width == 1 && row.shapes.len() < RECENT {
                row.shapes.push(shape);
            }
        }
    }

    /// One call of the session `key` of this replica, to be handed to the store.
    pub(super) fn outgoing_session(&self, key: &str, now: i64) {
        let mut outbox = self.outbox.lock().unwrap_or_else(PoisonError::into_inner);
        let bucket = now.div_euclid(SESSION_WIDTH);
        let entry = (key.to_string(), SESSION_WIDTH, bucket);
        if !outbox.contains_key(&entry) && outbox.len() >= OUTBOX {
            return;
        }
        let row = outbox.entry(entry).or_insert_with(|| Row {
            replica: String::new(),
            principal: key.to_string(),
            width: SESSION_WIDTH,
            bucket,
            counts: [0; KINDS],
            shapes: Vec::new(),
        });
        if let Some(calls) = row.counts.first_mut() {
            *calls = calls.saturating_add(1);
        }
    }

    /// The deltas waiting for the store, taken (give them back if the store does not take
    /// them).
    pub fn take(&self) -> Vec<Row> {
        let mut outbox = self.outbox.lock().unwrap_or_else(PoisonError::into_inner);
        outbox.drain().map(|(_, row)| row).collect()
    }

    /// Deltas the store did not take, merged back with what was counted since (bounded).
    pub fn give_back(&self, rows: Vec<Row>) {
        let mut outbox = self.outbox.lock().unwrap_or_else(PoisonError::into_inner);
        for row in rows {
            let key = (row.principal.clone(), row.width, row.bucket);
            let full = outbox.len() >= OUTBOX;
            match outbox.get_mut(&key) {
                Some(held) => {
                    for (count, amount) in held.counts.iter_mut().zip(row.counts) {
                        *count = count.saturating_add(amount);
                    }
                    let room = RECENT.saturating_sub(held.shapes.len());
                    held.shapes.extend(row.shapes.into_iter().take(room));
                }
                None if !full => {
                    outbox.insert(key, row);
                }
                None => {}
            }
        }
    }

    /// Other replicas' rows as the store shows them (absolute: a row read twice is the same).
    pub fn apply(&self, rows: &[Row], now: i64) {
        for row in rows {
            if row.width == SESSION_WIDTH {
                let slot = usize::try_from(row.slot()).unwrap_or(0);
                let calls = row.counts.first().copied().unwrap_or(0);
                let new = || Scale::new(SESSION_WIDTH);
                held_by(&self.sessions, MAX_SESSIONS, row, now, new, |scale| {
                    scale.set(slot, row.bucket, [calls]);
                });
            } else {
                held_by(
                    &self.others,
                    MAX_PRINCIPALS,
                    row,
                    now,
                    Remote::new,
                    |remote| {
                        remote.set(row);
                    },
                );
            }
        }
    }

    /// What the other replicas counted for the session `key` in the hour before `now`.
    pub(super) fn session_calls(&self, key: &str, now: i64) -> i64 {
        let Some(entry) = self.sessions.get(key) else {
            return 0;
        };
        let others = entry.lock().unwrap_or_else(PoisonError::into_inner);
        others
            .replicas
            .iter()
            .map(|(_, scale)| scale.total(now, 0))
            .fold(0, i64::saturating_add)
    }

    /// The exchange with the store succeeded at `now`.
    pub fn synced(&self, now: i64) {
        self.synced_at.fetch_max(now, Ordering::Relaxed);
    }

    /// Whether the counts are fresh at `now` (the last exchange at most `STALE_AFTER` ago).
    pub fn fresh(&self, now: i64) -> bool {
        let at = self.synced_at.load(Ordering::Relaxed);
        at != i64::MIN && now.saturating_sub(at) <= super::STALE_AFTER
    }

    /// What the other replicas counted for `principal` at `now`, for a call of `shape`.
    pub(super) fn facts(&self, principal: &str, shape: u64, now: i64) -> UsageFacts {
        let Some(entry) = self.others.get(principal) else {
            return UsageFacts::default();
        };
        let others = entry.lock().unwrap_or_else(PoisonError::into_inner);
        others
            .replicas
            .iter()
            .map(|(_, remote)| remote.facts(shape, now))
            .fold(UsageFacts::default(), UsageFacts::plus)
    }
}

/// Hands `row` to what `map` holds for the replica that wrote it (made by `new` the first
/// time), under its key: at most `cap` keys (the idlest forgotten at the cap) and
/// [`REPLICAS`] replicas a key (a row of a replica past them is not kept).
fn held_by<R>(
    map: &DashMap<String, Mutex<Others<R>>>,
    cap: usize,
    row: &Row,
    now: i64,
    new: impl FnOnce() -> R,
    update: impl FnOnce(&mut R),
) {
    if !map.contains_key(&row.principal) && map.len() >= cap {
        super::forget_idlest(map, |others| others.last_seen);
    }
    let entry = map.entry(row.principal.clone()).or_insert_with(|| {
        Mutex::new(Others {
            replicas: Vec::new(),
            last_seen: now,
        })
    });
    let mut others = entry.lock().unwrap_or_else(PoisonError::into_inner);
    others.last_seen = now;
    let index = others
        .replicas
        .iter()
        .position(|(replica, _)| *replica == row.replica);
    let held = match index {
        Some(index) => others.replicas.get_mut(index),
        None if others.replicas.len() < REPLICAS => {
            others.replicas.push((row.replica.clone(), new()));
            others.replicas.last_mut()
        }
        None => None,
    };
    if let Some((_, held)) = held {
        update(held);
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Counted, Usage};
    use super::*;

    fn write(shape: u64) -> Counted {
        Counted {
            writes: true,
            deleted_paths: 0,
            asked: false,
            denied: false,
            uploaded_bytes: 3,
            shape,
        }
    }

    /// Hands `from`'s deltas to `to` as the store would: summed per bucket, absolute.
    fn exchange(from: &Usage, store: &mut HashMap<(String, i64, i64), Row>, name: &str) {
        for row in from.fleet().unwrap().take() {
            let key = (row.principal.clone(), row.width, row.bucket);
            let held = store.entry(key).or_insert_with(|| Row {
                replica: name.to_string(),
                counts: [0; KINDS],
                shapes: Vec::new(),
                ..row.clone()
            });
            for (count, amount) in held.counts.iter_mut().zip(row.counts) {
                *count += amount;
            }
            held.shapes.extend(row.shapes);
        }
    }

    #[test]
    fn a_replica_adds_what_the_others_counted_and_is_unknown_when_stale() {
        let start = 1_800_000_000;
        let (a, b) = (Usage::shared(), Usage::shared());
        assert!(
            !a.facts("p", 1, start).known,
            "unknown before the first exchange"
        );
        assert_eq!(
            a.facts("p", 1, start).writes_hour,
            crate::state::usage::UNKNOWN_COUNT
        );
        for second in 0..3 {
            a.count("p", write(7), start + second);
        }
        let mut store = HashMap::new();
        exchange(&a, &mut store, "a");
        let rows: Vec<Row> = store.values().cloned().collect();
        b.fleet().unwrap().apply(&rows, start + 3);
        // Read twice: absolute rows change nothing.
        b.fleet().unwrap().apply(&rows, start + 3);
        b.fleet().unwrap().synced(start + 3);
        b.count("p", write(7), start + 3);
        let facts = b.facts("p", 7, start + 4);
        assert!(facts.known);
        assert_eq!(
            (facts.calls_minute, facts.writes_hour, facts.writes_day),
            (4, 4, 4)
        );
        assert_eq!(facts.identical_minute, 4);
        assert_eq!(b.facts("q", 7, start + 4).calls_day, 0);
        let stale = b.facts("p", 7, start + 3 + crate::state::usage::STALE_AFTER + 1);
        assert!(!stale.known);
        assert_eq!(stale.writes_hour, crate::state::usage::UNKNOWN_COUNT);
    }

    #[test]
    fn a_sessions_calls_on_one_replica_count_on_another() {
        let start = 1_800_000_000;
        let (a, b) = (Usage::shared(), Usage::shared());
        let who = super::super::Who {
            principal: "p",
            operation: "Design/read_file",
            person: "",
            session: "s1",
        };
        a.count_for(&who, write(1), start);
        a.count_for(&who, write(2), start + 1);
        let mut store = HashMap::new();
        exchange(&a, &mut store, "a");
        let sessions: Vec<&Row> = store
            .values()
            .filter(|row| row.width == SESSION_WIDTH)
            .collect();
        assert_eq!(sessions.len(), 1, "one row for the session's bucket");
        assert_eq!(sessions.first().map(|row| row.counts[0]), Some(2));
        let rows: Vec<Row> = store.values().cloned().collect();
        b.fleet().unwrap().apply(&rows, start + 2);
        b.fleet().unwrap().synced(start + 2);
        b.count_for(&who, write(3), start + 2);
        assert_eq!(b.facts_for(&who, 4, start + 3).session_calls_hour, 3);
        let other = super::super::Who {
            session: "s2",
            ..who
        };
        assert_eq!(b.facts_for(&other, 4, start + 3).session_calls_hour, 0);
    }

    #[test]
    fn deltas_not_taken_are_given_back_and_bounded() {
        let usage = Usage::shared();
        usage.count("p", write(1), 100);
        let taken = usage.fleet().unwrap().take();
        assert_eq!(taken.len(), 3, "one delta per scale");
        usage.count("p", write(2), 100);
        usage.fleet().unwrap().give_back(taken);
        let again = usage.fleet().unwrap().take();
        let second = again.iter().find(|row| row.width == 1).unwrap();
        assert_eq!(second.counts, [2, 2, 0, 0, 0, 6]);
        assert_eq!(second.shapes.len(), 2);
        let shared = usage.fleet().unwrap();
        for n in 0..(OUTBOX as i64) {
            shared.outgoing(&format!("p{n}"), 100, [1, 0, 0, 0, 0, 0], 0);
        }
        assert!(shared.take().len() <= OUTBOX);
    }
}
