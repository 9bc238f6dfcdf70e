//! audit::chain::head: the writer's end of the chain — the hash and number the next line
//! chains to, for the lines synced (committed) and for those written and still in flight, so a
//! batch that fails and is cut back from the file takes its links back with it and the retry
//! chains to the last line that stayed. It adds the chain fields to each line the writer
//! writes, writes the restart note first when there is one, and appends a signed checkpoint
//! when one is due. Which file the bytes go to is the writer's (`audit::writer::rotation`).

use std::collections::VecDeque;
use std::time::Instant;

use super::checkpoint::{self, Checkpoints};
use super::notes::{self, ChainNote};
use super::tail::Start;
use super::{append_chained, overhead, LineHash, Link};

/// Where the chain stands after some lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Tip {
    head: LineHash,
    next: u64,
    /// Records since the last checkpoint.
    unsigned: u64,
    checkpoint_at: Instant,
    /// The restart note is written.
    noted: bool,
}

/// The chain as the writer keeps it.
#[derive(Debug)]
pub struct Chainer {
    committed: Tip,
    /// Tips after each write in flight, by the file offset its bytes end at, oldest first.
    pending: VecDeque<(u64, Tip)>,
    /// The tip after the last `chain`, until `written` says where its bytes ended.
    staged: Option<Tip>,
    note: Option<ChainNote>,
    checkpoints: Option<Checkpoints>,
    out: Vec<u8>,
}

impl Chainer {
    pub fn new(start: Start, checkpoints: Option<Checkpoints>) -> Self {
        Self {
            committed: Tip {
                head: start.head,
                next: start.next,
                unsigned: 0,
                checkpoint_at: Instant::now(),
                noted: start.note.is_none(),
            },
            pending: VecDeque::new(),
            staged: None,
            note: start.note,
            checkpoints,
            out: Vec::new(),
        }
    }

    fn tip(&self) -> Tip {
        self.pending.back().map_or(self.committed, |(_, tip)| *tip)
    }

    /// Records wait to be signed after the last `chain` (written or not).
    pub fn has_unsigned(&self) -> bool {
        self.staged.unwrap_or_else(|| self.tip()).unsigned > 0
    }

    /// The bytes a line of `raw_bytes` takes once chained (an estimate for rotation: the
    /// number's digits are those of the next line's).
    pub fn line_len(&self, raw_bytes: u64) -> u64 {
        if raw_bytes == 0 {
            return 0;
        }
        raw_bytes + overhead(self.tip().next)
    }

    /// The bytes `lines` lines of `raw_bytes` together take once chained (see `line_len`).
    pub fn batch_len(&self, raw_bytes: u64, lines: u64) -> u64 {
        raw_bytes.saturating_add(lines.saturating_mul(overhead(self.tip().next)))
    }

    /// The lines of `raw` (complete encoded records, each ending in a newline) with their
    /// chain fields, after the restart note if it is not written yet and followed by a
    /// checkpoint when one is due (or `closing` and records are unsigned). Call `written` with
    /// the file offset they end at once they are written.
    pub fn chain(&mut self, raw: &[u8], now: Instant, closing: bool) -> &[u8] {
        let mut tip = self.tip();
        self.out.clear();
        if !tip.noted {
            if let Some(note) = &self.note {
                push(&mut self.out, &mut tip, &note.to_line());
            }
            tip.noted = true;
        }
        for line in raw.split_inclusive(|byte| *byte == b'\n') {
            if line.len() > 1 {
                push(&mut self.out, &mut tip, line);
                tip.unsigned += 1;
            }
        }
        if let Some(checkpoints) = &self.checkpoints {
            let due = tip.unsigned >= checkpoints.every_records.max(1)
                || (tip.unsigned > 0
                    && (closing || now.duration_since(tip.checkpoint_at) >= checkpoints.interval));
            if due {
                let link = Link {
                    n: tip.next,
                    prev: tip.head,
                };
                let record = checkpoint::sign(&checkpoints.key, link, notes::now(), tip.unsigned);
                push(&mut self.out, &mut tip, &record);
                tip.unsigned = 0;
                tip.checkpoint_at = now;
            }
        }
        self.staged = Some(tip);
        &self.out
    }

    /// The bytes of the last `chain` are written and end at file offset `end`.
    pub fn written(&mut self, end: u64) {
        if let Some(tip) = self.staged.take() {
            self.pending.push_back((end, tip));
        }
    }

    /// The file's lines up to offset `size` are synced: their links stay.
    pub fn commit_upto(&mut self, size: u64) {
        while let Some((end, tip)) = self.pending.front().copied() {
            if end > size {
                break;
            }
            self.committed = tip;
            self.pending.pop_front();
        }
    }

    /// Every write so far is synced.
    pub fn commit_all(&mut self) {
        if let Some((_, tip)) = self.pending.back().copied() {
            self.committed = tip;
        }
        self.pending.clear();
    }

    /// The writes in flight were cut back (or left in a file abandoned): their links go too.
    pub fn take_back(&mut self) {
        self.pending.clear();
        self.staged = None;
    }
}

fn push(out: &mut Vec<u8>, tip: &mut Tip, raw: &[u8]) {
    let start = out.len();
    append_chained(
        raw,
        Link {
            n: tip.next,
            prev: tip.head,
        },
        out,
    );
    let stored = out
        .get(start..out.len().saturating_sub(1))
        .unwrap_or_default();
    tip.head = LineHash::of(stored);
    tip.next += 1;
}

#[cfg(test)]
mod tests {
    use super::super::{key::CheckpointKey, split};
    use super::*;

    fn links(bytes: &[u8]) -> Vec<(u64, LineHash, LineHash)> {
        bytes
            .split(|byte| *byte == b'\n')
            .filter(|line| !line.is_empty())
            .map(|line| {
                let (_, link) = split(line).unwrap();
                (link.n, link.prev, LineHash::of(line))
            })
            .collect()
    }

    #[test]
    fn each_line_chains_to_the_one_before_and_a_failed_write_takes_its_links_back() {
        let mut chainer = Chainer::new(Start::default(), None);
        let now = Instant::now();
        let first = chainer
            .chain(b"{\"a\":1}\n{\"a\":2}\n", now, false)
            .to_vec();
        chainer.written(first.len() as u64);
        chainer.commit_all();
        let lines = links(&first);
        assert_eq!(lines[0].0, 0);
        assert_eq!(lines[0].1, LineHash::GENESIS);
        assert_eq!((lines[1].0, lines[1].1), (1, lines[0].2));

        let failed = chainer.chain(b"{\"a\":3}\n", now, false).to_vec();
        chainer.written(first.len() as u64 + failed.len() as u64);
        chainer.take_back();
        let retried = chainer.chain(b"{\"a\":3}\n", now, false).to_vec();
        assert_eq!(retried, failed, "the retry chains as the failed write did");
        let again = links(&retried);
        assert_eq!((again[0].0, again[0].1), (2, lines[1].2));
    }

    #[test]
    fn pipelined_writes_commit_in_order_by_offset() {
        let mut chainer = Chainer::new(Start::default(), None);
        let now = Instant::now();
        let a = chainer.chain(b"{\"a\":1}\n", now, false).len() as u64;
        chainer.written(a);
        let b = chainer.chain(b"{\"a\":2}\n", now, false).len() as u64;
        chainer.written(a + b);
        chainer.commit_upto(a);
        chainer.take_back();
        let next = chainer.chain(b"{\"a\":2}\n", now, false).to_vec();
        assert_eq!(links(&next)[0].0, 1, "only the first write stayed");
    }

    #[test]
    fn a_checkpoint_follows_every_n_records_and_the_restart_note_comes_first() {
        let key = CheckpointKey::from_seed([1; 32]);
        let checkpoints = Checkpoints {
            key,
            every_records: 2,
            interval: std::time::Duration::from_secs(3600),
        };
        let start = Start {
            note: Some(ChainNote::tail_unreadable("decisions-000001.jsonl", "gone")),
            ..Start::default()
        };
        let mut chainer = Chainer::new(start, Some(checkpoints));
        let now = Instant::now();
        let out = chainer
            .chain(b"{\"a\":1}\n{\"a\":2}\n{\"a\":3}\n", now, false)
            .to_vec();
        let text = String::from_utf8(out.clone()).unwrap();
        let kinds: Vec<&str> = text
            .lines()
            .map(|line| {
                if line.contains("\"kind\":\"chain\"") {
                    "note"
                } else if line.contains("checkpoint") {
                    "checkpoint"
                } else {
                    "record"
                }
            })
            .collect();
        assert_eq!(kinds, ["note", "record", "record", "record", "checkpoint"]);
        let checkpoint = text.lines().last().unwrap().as_bytes();
        let (record, link) = split(checkpoint).unwrap();
        assert!(checkpoint::check(&record, link).is_ok());
        chainer.written(out.len() as u64);
        assert!(
            !String::from_utf8(chainer.chain(b"", now, true).to_vec())
                .unwrap()
                .contains("checkpoint"),
            "nothing unsigned, nothing to sign at close"
        );
    }
}
