//! state::usage: what a caller has done lately (issue 36 §2), counted here and given to its
//! next decision as [`UsageFacts`] (`context.caller.usage…`, so policies set limits on them;
//! all zero for a caller that did nothing and in every record written before the counts
//! existed). Per principal: calls, writes, deleted paths, asks, refusals and bytes uploaded in
//! sliding windows of a minute (60 one-second buckets), an hour (60 one-minute buckets) and a
//! day (24 one-hour buckets, the six counters sharing each bucket), and the last calls' shapes
//! for "identical in
//! the last minute". Bounded: at most [`MAX_PRINCIPALS`] principals (at the cap the idlest
//! [`FORGET`] are forgotten in one pass) and [`RECENT`] shapes each. In a fleet ([`Usage::shared`])
//! each replica also keeps what the others counted (`shared`: their buckets as the store last
//! showed them) and the increments it has not flushed yet; a decision's facts are the sum, and
//! are `known` only while the last exchange with the store is at most [`STALE_AFTER`] old —
//! else every count reads [`UNKNOWN_COUNT`], so a limit fails closed. Reads no clock: time is
//! passed in.

pub mod shared;

use std::collections::VecDeque;
use std::hash::{Hash, Hasher};
use std::sync::Mutex;

use dashmap::DashMap;
use serde::{Deserialize, Serialize};

/// One principal's recent usage, before the call being decided (it is not counted yet).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UsageFacts {
    /// Calls decided for this principal in the last 60 s, hour, day (any outcome).
    pub calls_minute: i64,
    pub calls_hour: i64,
    pub calls_day: i64,
    /// Calls that write (not read-only) in the last hour and day.
    pub writes_hour: i64,
    pub writes_day: i64,
    /// Paths deleted by calls in the last day (`delete_files` targets, `project_delete`).
    pub deletes_day: i64,
    /// Calls that asked a human in the last hour.
    pub asks_hour: i64,
    /// Calls identical to this one (the same tool, operation and arguments) in the last 60 s.
    pub identical_minute: i64,
    /// This principal's calls of the same tool and operation in the last hour and day.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub operation_calls_hour: i64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub operation_calls_day: i64,
    /// Calls made for the same person (the caller's email: every agent acting for them) in
    /// the last hour and day; 0 when the caller names no person.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub person_calls_hour: i64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub person_calls_day: i64,
    /// Calls of the same session (this principal's session id) in the last hour, in
    /// five-minute steps.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub session_calls_hour: i64,
    /// Calls refused (denied) in the last hour and day.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub denies_hour: i64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub denies_day: i64,
    /// Bytes of file bodies the calls decided in the last hour and day would upload (Design
    /// `write_files` data, a Projects `project_write`'s content or local file), whatever the
    /// outcome.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub uploaded_bytes_hour: i64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub uploaded_bytes_day: i64,
    /// This call is over the caller's rate limit (`limits.rate`, `state::rate`): the gate
    /// `gates.rate-limit` denies it. Left out of records when false (and in every record
    /// written before the limit existed).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rate_limited: bool,
    /// Whole seconds until the caller's next call fits its rate (0 when not limited).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retry_after_seconds: i64,
    /// Whether the counts are the fleet's (always, in one process): false while a replica's
    /// exchange with the store is older than [`STALE_AFTER`]; the counts then read
    /// [`UNKNOWN_COUNT`]. Left out of records when true (and true in every record written
    /// before it existed).
    #[serde(default = "known", skip_serializing_if = "Clone::clone")]
    pub known: bool,
}

fn is_zero(value: &i64) -> bool {
    *value == 0
}

fn known() -> bool {
    true
}

impl Default for UsageFacts {
    fn default() -> Self {
        Self {
            calls_minute: 0,
            calls_hour: 0,
            calls_day: 0,
            writes_hour: 0,
            writes_day: 0,
            deletes_day: 0,
            asks_hour: 0,
            identical_minute: 0,
            operation_calls_hour: 0,
            operation_calls_day: 0,
            person_calls_hour: 0,
            person_calls_day: 0,
            session_calls_hour: 0,
            denies_hour: 0,
            denies_day: 0,
            uploaded_bytes_hour: 0,
            uploaded_bytes_day: 0,
            rate_limited: false,
            retry_after_seconds: 0,
            known: true,
        }
    }
}

impl UsageFacts {
    pub fn is_zero(&self) -> bool {
        *self == Self::default()
    }

    /// The counts when the fleet's are not known: each reads [`UNKNOWN_COUNT`], past any
    /// limit a policy sets, so the limit fails closed (a rule that would rather not writes
    /// `context.caller.usage.known && …`).
    pub fn unknown() -> Self {
        Self {
            calls_minute: UNKNOWN_COUNT,
            calls_hour: UNKNOWN_COUNT,
            calls_day: UNKNOWN_COUNT,
            writes_hour: UNKNOWN_COUNT,
            writes_day: UNKNOWN_COUNT,
            deletes_day: UNKNOWN_COUNT,
            asks_hour: UNKNOWN_COUNT,
            identical_minute: UNKNOWN_COUNT,
            operation_calls_hour: UNKNOWN_COUNT,
            operation_calls_day: UNKNOWN_COUNT,
            person_calls_hour: UNKNOWN_COUNT,
            person_calls_day: UNKNOWN_COUNT,
            session_calls_hour: UNKNOWN_COUNT,
            denies_hour: UNKNOWN_COUNT,
            denies_day: UNKNOWN_COUNT,
            uploaded_bytes_hour: UNKNOWN_COUNT,
            uploaded_bytes_day: UNKNOWN_COUNT,
            known: false,
            ..Self::default()
        }
    }

    /// These counts and `other`'s, summed (a replica's own and the fleet's).
    fn plus(self, other: Self) -> Self {
        Self {
            calls_minute: self.calls_minute.saturating_add(other.calls_minute),
            calls_hour: self.calls_hour.saturating_add(other.calls_hour),
            calls_day: self.calls_day.saturating_add(other.calls_day),
            writes_hour: self.writes_hour.saturating_add(other.writes_hour),
            writes_day: self.writes_day.saturating_add(other.writes_day),
            deletes_day: self.deletes_day.saturating_add(other.deletes_day),
            asks_hour: self.asks_hour.saturating_add(other.asks_hour),
            identical_minute: self.identical_minute.saturating_add(other.identical_minute),
            operation_calls_hour: self
                .operation_calls_hour
                .saturating_add(other.operation_calls_hour),
            operation_calls_day: self
                .operation_calls_day
                .saturating_add(other.operation_calls_day),
            person_calls_hour: self
                .person_calls_hour
                .saturating_add(other.person_calls_hour),
            person_calls_day: self.person_calls_day.saturating_add(other.person_calls_day),
            session_calls_hour: self
                .session_calls_hour
                .saturating_add(other.session_calls_hour),
            denies_hour: self.denies_hour.saturating_add(other.denies_hour),
            denies_day: self.denies_day.saturating_add(other.denies_day),
            uploaded_bytes_hour: self
                .uploaded_bytes_hour
                .saturating_add(other.uploaded_bytes_hour),
            uploaded_bytes_day: self
                .uploaded_bytes_day
                .saturating_add(other.uploaded_bytes_day),
            ..self
        }
    }
}

/// What every count reads while the fleet's counts are not known.
pub const UNKNOWN_COUNT: i64 = 1_000_000_000;

/// How old a replica's last exchange with the store may be for its counts to be known: the
/// exchange runs every second (`shared::EVERY`), so this is three missed rounds.
pub const STALE_AFTER: i64 = 3;

/// Principals counted at once.
pub const MAX_PRINCIPALS: usize = 100_000;
/// Principals forgotten at once when the cap is reached (the idlest first).
pub const FORGET: usize = MAX_PRINCIPALS / 16;
/// Sessions counted at once (their calls only: [`SessionCalls`], ~0.3 KiB each with its key).
pub const MAX_SESSIONS: usize = 100_000;
/// The width of a session's buckets: five minutes, twelve of them an hour.
pub const SESSION_WIDTH: i64 = 300;
/// Call shapes remembered per principal for `identical_minute`.
pub const RECENT: usize = 64;

/// The counters kept per bucket: calls, writes, deleted paths, asks, refusals, bytes uploaded.
const KINDS: usize = 6;
const CALLS: usize = 0;
const WRITES: usize = 1;
const DELETES: usize = 2;
const ASKS: usize = 3;
const DENIES: usize = 4;
const UPLOADED: usize = 5;

/// The counters of one time scale in buckets of `width` seconds; `SLOTS` buckets make its
/// window. The six counters share their buckets' numbers (32 bytes a bucket).
#[derive(Debug, Clone)]
struct Scale<const SLOTS: usize, const K: usize = KINDS> {
    width: i64,
    /// Each slot's bucket number (`i64::MIN`: never used).
    buckets: [i64; SLOTS],
    counts: [[u32; K]; SLOTS],
}

impl<const SLOTS: usize, const K: usize> Scale<SLOTS, K> {
    fn new(width: i64) -> Self {
        Self {
            width,
            buckets: [i64::MIN; SLOTS],
            counts: [[0; K]; SLOTS],
        }
    }

    fn add(&mut self, now: i64, amounts: [u32; K]) {
        let bucket = now.div_euclid(self.width);
        let index = usize::try_from(bucket.rem_euclid(SLOTS as i64)).unwrap_or(0);
        let (Some(number), Some(counts)) =
            (self.buckets.get_mut(index), self.counts.get_mut(index))
        else {
            return;
        };
        if *number != bucket {
            *number = bucket;
            *counts = [0; K];
        }
        for (count, amount) in counts.iter_mut().zip(amounts) {
            *count = count.saturating_add(amount);
        }
    }

    /// Slot `slot` as another replica's store row has it: bucket `bucket` with `counts`
    /// (an older bucket than the slot holds is not taken).
    fn set(&mut self, slot: usize, bucket: i64, counts: [u32; K]) {
        let (Some(number), Some(held)) = (self.buckets.get_mut(slot), self.counts.get_mut(slot))
        else {
            return;
        };
        if bucket >= *number {
            *number = bucket;
            *held = counts;
        }
    }

    /// Counter `kind`'s total over the buckets within the window ending at `now`.
    fn total(&self, now: i64, kind: usize) -> i64 {
        let bucket = now.div_euclid(self.width);
        let oldest = bucket - (SLOTS as i64 - 1);
        self.buckets
            .iter()
            .zip(&self.counts)
            .filter(|(number, _)| (oldest..=bucket).contains(*number))
            .map(|(_, counts)| i64::from(counts.get(kind).copied().unwrap_or(0)))
            .sum()
    }
}

#[derive(Debug)]
struct Counts {
    /// 60 one-second buckets, 60 one-minute buckets, 24 one-hour buckets.
    minute: Scale<60>,
    hour: Scale<60>,
    day: Scale<24>,
    /// `(second, shape)` of the last calls, newest last.
    recent: VecDeque<(i64, u64)>,
    last_seen: i64,
}

impl Counts {
    fn new(now: i64) -> Self {
        Self {
            minute: Scale::new(1),
            hour: Scale::new(60),
            day: Scale::new(3_600),
            recent: VecDeque::new(),
            last_seen: now,
        }
    }

    fn add(&mut self, now: i64, amounts: [u32; KINDS]) {
        self.minute.add(now, amounts);
        self.hour.add(now, amounts);
        self.day.add(now, amounts);
    }
}

/// One session's calls in the last hour: twelve five-minute buckets of one counter. Sessions
/// are many and short, so they keep this and not a principal's whole windows.
#[derive(Debug)]
struct SessionCalls {
    hour: Scale<12, 1>,
    last_seen: i64,
}

impl SessionCalls {
    fn new(now: i64) -> Self {
        Self {
            hour: Scale::new(SESSION_WIDTH),
            last_seen: now,
        }
    }
}

/// What one decided call adds to its principal's counts.
#[derive(Debug, Clone, Copy)]
pub struct Counted {
    pub writes: bool,
    pub deleted_paths: i64,
    pub asked: bool,
    pub denied: bool,
    /// The bytes of file bodies the call would upload.
    pub uploaded_bytes: u64,
    /// [`shape`] of the call.
    pub shape: u64,
}

impl Counted {
    /// What the call adds to each counter of its buckets.
    fn amounts(&self) -> [u32; KINDS] {
        let deleted = u32::try_from(self.deleted_paths.max(0)).unwrap_or(u32::MAX);
        let uploaded = u32::try_from(self.uploaded_bytes).unwrap_or(u32::MAX);
        [
            1,
            u32::from(self.writes),
            deleted,
            u32::from(self.asked),
            u32::from(self.denied),
            uploaded,
        ]
    }
}

/// The shape of a call for "identical": a digest of the whole call as askgate keeps it (tool,
/// operation and every argument), e.g. its JSON.
pub fn shape(call: &[u8]) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    call.hash(&mut hasher);
    hasher.finish()
}

/// Whom a call counts for beyond its principal: the tool and operation (`ClaudeDesign/
/// write_files`) and the person behind the caller (an email, or ""), whose keys hold whole
/// windows and stay few; and the session (its id under the principal), whose calls only are
/// kept ([`SessionCalls`]: sessions are many).
#[derive(Debug, Clone, Copy)]
pub struct Who<'a> {
    pub principal: &'a str,
    pub operation: &'a str,
    pub person: &'a str,
    pub session: &'a str,
}

/// The separator of a composite key (no principal, operation, session id or email holds it).
const UNIT: char = '\u{1f}';

impl Who<'_> {
    /// The session's key: the principal's session id.
    fn session_key(&self) -> String {
        format!("{}{UNIT}session{UNIT}{}", self.principal, self.session)
    }

    /// The keys counted beside the principal's: by operation, by person.
    fn keys(&self) -> [Option<String>; 2] {
        let principal = self.principal;
        [
            Some(format!(
                "{principal}{UNIT}operation{UNIT}{}",
                self.operation
            )),
            (!self.person.is_empty()).then(|| format!("{UNIT}person{UNIT}{}", self.person)),
        ]
    }
}

/// Every principal's counts: this process's, and in a fleet the others' ([`shared`]). Keys
/// are principals and, beside them, a principal's operations and the people behind
/// principals ([`Who`]); the cap counts every key.
#[derive(Debug, Default)]
pub struct Usage {
    by_principal: DashMap<String, Mutex<Counts>>,
    by_session: DashMap<String, Mutex<SessionCalls>>,
    shared: Option<shared::Shared>,
}

impl Usage {
    /// The counts of a replica of a fleet: the others' are added as the store shows them, and
    /// the facts are unknown until the first exchange.
    pub fn shared() -> Self {
        Self {
            by_principal: DashMap::new(),
            by_session: DashMap::new(),
            shared: Some(shared::Shared::default()),
        }
    }

    /// The fleet's side of these counts (`None` in one process).
    pub fn fleet(&self) -> Option<&shared::Shared> {
        self.shared.as_ref()
    }

    /// The usage of the call of `who` at `now`, for a call of `shape`: the principal's counts
    /// ([`Self::facts`]) with its operation's and its person's.
    pub fn facts_for(&self, who: &Who<'_>, shape: u64, now: i64) -> UsageFacts {
        let mut facts = self.facts(who.principal, shape, now);
        if !facts.known {
            return facts;
        }
        let [operation, person] = who.keys();
        let of = |key: Option<String>| {
            key.map(|key| self.facts(&key, shape, now))
                .unwrap_or_default()
        };
        let operation = of(operation);
        facts.operation_calls_hour = operation.calls_hour;
        facts.operation_calls_day = operation.calls_day;
        let person = of(person);
        facts.person_calls_hour = person.calls_hour;
        facts.person_calls_day = person.calls_day;
        facts.session_calls_hour = self.session_calls(&who.session_key(), now);
        facts
    }

    /// The calls of the session `key` in the last hour: this process's and, in a fleet, the
    /// others' (the caller checked they are fresh).
    fn session_calls(&self, key: &str, now: i64) -> i64 {
        let local = self
            .by_session
            .get(key)
            .map(|entry| {
                let calls = entry
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                calls.hour.total(now, 0)
            })
            .unwrap_or(0);
        let others = (self.shared.as_ref()).map_or(0, |shared| shared.session_calls(key, now));
        local.saturating_add(others)
    }

    /// Counts one call of the session `key` at `now`.
    fn count_session(&self, key: String, now: i64) {
        if !self.by_session.contains_key(&key) && self.by_session.len() >= MAX_SESSIONS {
            forget_idlest(&self.by_session, |calls| calls.last_seen);
        }
        if let Some(shared) = &self.shared {
            shared.outgoing_session(&key, now);
        }
        let entry = self
            .by_session
            .entry(key)
            .or_insert_with(|| Mutex::new(SessionCalls::new(now)));
        let mut calls = entry
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        calls.hour.add(now, [1]);
        calls.last_seen = now;
    }

    /// Sessions counted here.
    pub fn sessions(&self) -> usize {
        self.by_session.len()
    }

    /// Counts one decided call of `who` at `now`, under each of its keys.
    pub fn count_for(&self, who: &Who<'_>, call: Counted, now: i64) {
        self.count(who.principal, call, now);
        for key in who.keys().into_iter().flatten() {
            self.count(&key, call, now);
        }
        self.count_session(who.session_key(), now);
    }

    /// `principal`'s usage at `now` (unix seconds), for a call of `shape`: this process's
    /// counts plus, in a fleet, the others' — or [`UsageFacts::unknown`] while they are stale.
    pub fn facts(&self, principal: &str, shape: u64, now: i64) -> UsageFacts {
        let Some(shared) = &self.shared else {
            return self.local_facts(principal, shape, now);
        };
        if !shared.fresh(now) {
            return UsageFacts::unknown();
        }
        let others = shared.facts(principal, shape, now);
        self.local_facts(principal, shape, now).plus(others)
    }

    fn local_facts(&self, principal: &str, shape: u64, now: i64) -> UsageFacts {
        let Some(entry) = self.by_principal.get(principal) else {
            return UsageFacts::default();
        };
        let Ok(counts) = entry.lock() else {
            return UsageFacts::default();
        };
        let identical = counts
            .recent
            .iter()
            .filter(|(second, seen)| *seen == shape && now - second < 60)
            .count();
        totals((&counts.minute, &counts.hour, &counts.day), identical, now)
    }

    /// Counts one decided call of `principal` at `now`.
    pub fn count(&self, principal: &str, call: Counted, now: i64) {
        if !self.by_principal.contains_key(principal) && self.by_principal.len() >= MAX_PRINCIPALS {
            self.forget_idlest();
        }
        let entry = self
            .by_principal
            .entry(principal.to_string())
            .or_insert_with(|| Mutex::new(Counts::new(now)));
        let Ok(mut counts) = entry.lock() else {
            return;
        };
        let amounts = call.amounts();
        counts.add(now, amounts);
        if counts.recent.len() == RECENT {
            counts.recent.pop_front();
        }
        counts.recent.push_back((now, call.shape));
        counts.last_seen = now;
        drop(counts);
        drop(entry);
        if let Some(shared) = &self.shared {
            shared.outgoing(principal, now, amounts, call.shape);
        }
    }

    pub fn len(&self) -> usize {
        self.by_principal.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_principal.is_empty()
    }

    /// At the cap: forgets the idlest [`FORGET`] principals in one pass.
    fn forget_idlest(&self) {
        forget_idlest(&self.by_principal, |counts| counts.last_seen);
    }
}

/// The facts three scales hold at `now`, with `identical` calls of the same shape.
fn totals(
    (minute, hour, day): (&Scale<60>, &Scale<60>, &Scale<24>),
    identical: usize,
    now: i64,
) -> UsageFacts {
    UsageFacts {
        calls_minute: minute.total(now, CALLS),
        calls_hour: hour.total(now, CALLS),
        calls_day: day.total(now, CALLS),
        writes_hour: hour.total(now, WRITES),
        writes_day: day.total(now, WRITES),
        deletes_day: day.total(now, DELETES),
        asks_hour: hour.total(now, ASKS),
        denies_hour: hour.total(now, DENIES),
        denies_day: day.total(now, DENIES),
        uploaded_bytes_hour: hour.total(now, UPLOADED),
        uploaded_bytes_day: day.total(now, UPLOADED),
        identical_minute: i64::try_from(identical).unwrap_or(i64::MAX),
        ..UsageFacts::default()
    }
}

/// At the cap: forgets the idlest [`FORGET`] principals of `map` in one pass (by `seen`), so a
/// flood of new principals costs one scan per `FORGET` of them, not one per call.
fn forget_idlest<T>(map: &DashMap<String, Mutex<T>>, seen: impl Fn(&T) -> i64) {
    forget_oldest(map, FORGET, seen);
}

/// Forgets the `forget` entries of `map` seen longest ago (exactly that many, ties at the cut
/// broken by the map's order).
fn forget_oldest<T>(map: &DashMap<String, Mutex<T>>, forget: usize, seen: impl Fn(&T) -> i64) {
    // Two passes and no key copied: the last-seen times alone, to find the cut; then one
    // `retain` that drops everything older and as many at the cut as are still to go.
    let mut times: Vec<i64> = map
        .iter()
        .map(|entry| {
            let held = entry.value().lock();
            held.map_or(i64::MIN, |held| seen(&held))
        })
        .collect();
    let forget = forget.min(times.len());
    if forget == 0 {
        return;
    }
    let (below, cut, _) = times.select_nth_unstable(forget - 1);
    let cut = *cut;
    let mut at_cut = forget - below.iter().filter(|at| **at < cut).count();
    map.retain(|_, held| {
        let at = held.get_mut().map_or(i64::MIN, |held| seen(held));
        if at < cut {
            return false;
        }
        if at == cut && at_cut > 0 {
            at_cut -= 1;
            return false;
        }
        true
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(writes: bool, deleted: i64, asked: bool, shape: u64) -> Counted {
        Counted {
            writes,
            deleted_paths: deleted,
            asked,
            denied: false,
            uploaded_bytes: 0,
            shape,
        }
    }

    #[test]
    fn refusals_and_uploaded_bytes_are_counted_by_hour_and_day() {
        let usage = Usage::default();
        let start = 1_800_000_000;
        let upload = |bytes, denied| Counted {
            denied,
            uploaded_bytes: bytes,
            ..call(true, 0, false, 1)
        };
        usage.count("a", upload(1_000, false), start);
        usage.count("a", upload(500, true), start + 10);
        usage.count("a", upload(u64::MAX, true), start + 4_000);
        let now = usage.facts("a", 1, start + 20);
        assert_eq!((now.denies_hour, now.denies_day), (1, 1));
        assert_eq!(
            (now.uploaded_bytes_hour, now.uploaded_bytes_day),
            (1_500, 1_500)
        );
        let later = usage.facts("a", 1, start + 4_010);
        assert_eq!((later.denies_hour, later.denies_day), (1, 2));
        // A body past 4 GiB counts as 4 GiB (a bucket's counter saturates, never wraps).
        assert_eq!(later.uploaded_bytes_hour, i64::from(u32::MAX));
        assert_eq!(later.uploaded_bytes_day, 1_500 + i64::from(u32::MAX));
        let unknown = UsageFacts::unknown();
        assert_eq!(unknown.denies_hour, UNKNOWN_COUNT);
        assert_eq!(unknown.uploaded_bytes_day, UNKNOWN_COUNT);
    }

    #[test]
    fn windows_slide_minute_hour_and_day() {
        let usage = Usage::default();
        let start = 1_800_000_000;
        usage.count("a", call(true, 2, false, 1), start);
        usage.count("a", call(false, 0, true, 1), start + 30);
        let now = usage.facts("a", 1, start + 40);
        assert_eq!((now.calls_minute, now.calls_hour, now.calls_day), (2, 2, 2));
        assert_eq!((now.writes_hour, now.deletes_day, now.asks_hour), (1, 2, 1));
        assert_eq!(now.identical_minute, 2);
        assert_eq!(usage.facts("a", 2, start + 40).identical_minute, 0);
        let later = usage.facts("a", 1, start + 75);
        assert_eq!((later.calls_minute, later.calls_hour), (1, 2));
        assert_eq!(later.identical_minute, 1);
        let next_day = usage.facts("a", 1, start + 2 * 86_400);
        assert!(next_day.is_zero(), "{next_day:?}");
        assert!(usage.facts("b", 1, start).is_zero());
    }

    #[test]
    fn a_call_counts_for_its_operation_and_its_person() {
        let usage = Usage::default();
        let start = 1_800_000_000;
        let who = |principal, operation, person| Who {
            principal,
            operation,
            person,
            session: "s1",
        };
        let write = who("a", "Design/write_files", "alice@x");
        usage.count_for(&write, call(true, 0, false, 1), start);
        let read = who("a", "Design/read_file", "alice@x");
        usage.count_for(&read, call(false, 0, false, 2), start);
        let other = who("b", "Design/write_files", "alice@x");
        usage.count_for(&other, call(true, 0, false, 3), start);
        let facts = usage.facts_for(&write, 9, start + 5);
        assert_eq!(facts.calls_hour, 2, "the principal's");
        assert_eq!(
            (facts.operation_calls_hour, facts.operation_calls_day),
            (1, 1)
        );
        assert_eq!((facts.person_calls_hour, facts.person_calls_day), (3, 3));
        let nobody = usage.facts_for(&who("a", "Design/write_files", ""), 9, start + 5);
        assert_eq!(nobody.person_calls_hour, 0, "no person, no person's count");
        assert_eq!(
            facts.session_calls_hour, 2,
            "a's calls in session s1 (b's is its own)"
        );
    }

    #[test]
    fn a_sessions_calls_slide_out_in_five_minute_steps_and_sessions_are_capped() {
        let usage = Usage::default();
        let start = 1_800_000_000 - 1_800_000_000 % SESSION_WIDTH;
        let who = |session| Who {
            principal: "a",
            operation: "Design/read_file",
            person: "",
            session,
        };
        usage.count_for(&who("s1"), call(false, 0, false, 1), start);
        usage.count_for(&who("s1"), call(false, 0, false, 1), start + 299);
        usage.count_for(&who("s2"), call(false, 0, false, 1), start + 299);
        assert_eq!(
            usage
                .facts_for(&who("s1"), 1, start + 300)
                .session_calls_hour,
            2
        );
        assert_eq!(
            usage
                .facts_for(&who("s2"), 1, start + 300)
                .session_calls_hour,
            1
        );
        // Twelve buckets later the first bucket (both of s1's calls) has slid out.
        let later = start + 12 * SESSION_WIDTH;
        assert_eq!(usage.facts_for(&who("s1"), 1, later).session_calls_hour, 0);
        // Sessions are bounded: past the cap the idlest are forgotten in one pass.
        for n in 0..MAX_SESSIONS + 10 {
            usage.count_session(format!("a{UNIT}session{UNIT}flood-{n}"), start + 1_000);
        }
        assert!(usage.sessions() <= MAX_SESSIONS, "{}", usage.sessions());
    }

    #[test]
    fn forgetting_takes_exactly_the_oldest_however_many_share_the_cut() {
        let map: DashMap<String, Mutex<i64>> = DashMap::new();
        for (key, seen) in [("a", 5), ("b", 1), ("c", 3), ("d", 3), ("e", 3), ("f", 9)] {
            map.insert(key.to_string(), Mutex::new(seen));
        }
        forget_oldest(&map, 3, |seen| *seen);
        assert_eq!(map.len(), 3);
        assert!(!map.contains_key("b"), "the oldest goes");
        let left_at_cut = ["c", "d", "e"]
            .iter()
            .filter(|key| map.contains_key(**key))
            .count();
        assert_eq!(left_at_cut, 1, "two of the three at the cut go, one stays");
        assert!(map.contains_key("a") && map.contains_key("f"));
    }

    #[test]
    fn the_recent_shapes_are_bounded() {
        let usage = Usage::default();
        for second in 0..200 {
            usage.count("a", call(false, 0, false, 7), 1_000 + second / 10);
        }
        assert_eq!(
            usage.facts("a", 7, 1_020).identical_minute,
            i64::try_from(RECENT).unwrap()
        );
    }
}
