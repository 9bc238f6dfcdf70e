//! trace::sampling: whether a call's trace is exported, decided once at the door (issue 36
//! §3). A call that is not sampled gets no span at all — neither its own nor its children's —
//! so a service exporting one call in ten pays for the tenth and not for the other nine; the
//! SDK behind it keeps every span askgate draws. The rule is the OpenTelemetry samplers'
//! (`parentbased_traceidratio` by default): a caller's `traceparent` decides by its sampled
//! flag when the sampler is parent-based, otherwise the trace id (or, for a new trace, a
//! random number) is kept below the ratio, as `TraceIdRatioBased` keeps it.

use std::sync::OnceLock;

use opentelemetry::trace::SpanContext;

/// How new and continued traces are sampled.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampling {
    /// A caller's sampled flag decides for its trace (`parentbased_*`).
    pub parent_based: bool,
    /// The share of the other traces kept, 0 to 1.
    pub ratio: f64,
}

impl Sampling {
    /// `parentbased_traceidratio` at `ratio`: the `telemetry.sample_ratio` reading.
    pub fn parent_based(ratio: f64) -> Self {
        Self {
            parent_based: true,
            ratio,
        }
    }

    /// Whether a call under `parent` (invalid when the caller sent none) is sampled.
    pub fn keeps(&self, parent: &SpanContext) -> bool {
        if parent.is_valid() {
            if self.parent_based {
                return parent.is_sampled();
            }
            let id = u128::from_be_bytes(parent.trace_id().to_bytes());
            // The low 64 bits, as the SDK's ratio sampler reads a trace id.
            return below(self.ratio, id as u64);
        }
        below(self.ratio, getrandom::u64().unwrap_or(u64::MAX))
    }
}

/// Whether `random` (a trace id's low 64 bits) falls within `ratio` of all values.
fn below(ratio: f64, random: u64) -> bool {
    if ratio >= 1.0 {
        return true;
    }
    if ratio <= 0.0 {
        return false;
    }
    let bound = (ratio * (1u64 << 63) as f64) as u64;
    (random >> 1) < bound
}

static SAMPLING: OnceLock<Sampling> = OnceLock::new();

/// Turns sampling on for the process (by `server::telemetry`, when export is on; the first
/// call wins). Until then no call is traced.
pub fn install(sampling: Sampling) {
    let _first = SAMPLING.set(sampling);
}

/// The process's sampling; `None` when nothing is exported.
pub fn current() -> Option<&'static Sampling> {
    SAMPLING.get()
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry::trace::{SpanId, TraceFlags, TraceId, TraceState};

    fn parent(trace: u128, sampled: bool) -> SpanContext {
        let flags = if sampled {
            TraceFlags::SAMPLED
        } else {
            TraceFlags::default()
        };
        SpanContext::new(
            TraceId::from_bytes(trace.to_be_bytes()),
            SpanId::from_bytes([7; 8]),
            flags,
            true,
            TraceState::default(),
        )
    }

    #[test]
    fn a_parent_based_sampler_follows_the_callers_flag() {
        let sampling = Sampling::parent_based(0.0);
        assert!(sampling.keeps(&parent(5, true)));
        let all = Sampling::parent_based(1.0);
        assert!(!all.keeps(&parent(5, false)));
        assert!(all.keeps(&SpanContext::empty_context()));
        assert!(!sampling.keeps(&SpanContext::empty_context()));
    }

    #[test]
    fn a_ratio_sampler_reads_the_trace_ids_low_bits_like_the_sdk() {
        let half = Sampling {
            parent_based: false,
            ratio: 0.5,
        };
        // The low 64 bits shifted right by one against 2^62.
        assert!(half.keeps(&parent((1u128 << 64) | ((1u128 << 63) - 2), false)));
        assert!(!half.keeps(&parent(u64::MAX as u128, true)));
    }

    #[test]
    fn new_traces_are_kept_at_about_the_ratio() {
        let tenth = Sampling::parent_based(0.1);
        let kept = (0..20_000)
            .filter(|_| tenth.keeps(&SpanContext::empty_context()))
            .count();
        // 2,000 expected; 6 standard deviations (about 42 each) either side.
        assert!((1_750..2_250).contains(&kept), "{kept} of 20,000");
    }
}
