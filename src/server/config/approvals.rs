//! server::config::approvals: the approving feature's section — the bounds and deadlines of
//! pending approvals (the `approvals` object, validated into [`ApprovalLimits`], which
//! `store::approvals` applies), who may answer (`separation_of_duties`,
//! `refusal_requires_note`) and how long an approval lives (`approval_ttl_seconds`), as one
//! [`DeskSettings`] for `server::approving`.

use std::time::Duration;

use serde::Deserialize;

use super::ConfigError;
pub use crate::store::approvals::ApprovalLimits;

/// The `approvals` object as written; absent keys take the defaults of [`ApprovalLimits`].
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RawApprovalLimits {
    pub max_pending_per_caller: Option<usize>,
    pub max_pending: Option<usize>,
    pub max_held_bytes: Option<u64>,
    pub max_held_bytes_per_caller: Option<u64>,
    pub retention_seconds: Option<u64>,
    pub run_deadline_seconds: Option<u64>,
    pub approve_wait_seconds: Option<u64>,
    pub sweep_interval_ms: Option<u64>,
    /// Nobody approves a call their own agent asked for (`approving.separation-of-duties`,
    /// a fact of the approving policies); default true.
    pub separation_of_duties: Option<bool>,
    /// A refusal must say why (a `note`); default false (issue 35).
    pub refusal_requires_note: Option<bool>,
}

/// The approving feature's settings, validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeskSettings {
    pub limits: ApprovalLimits,
    /// What the approving policies read of the configuration (`approvals.separation_of_duties`).
    pub approving: crate::authz::approving::ApprovingSettings,
    /// `approvals.refusal_requires_note`: a refusal without a note is refused (issue 35).
    pub refusal_requires_note: bool,
    /// `approval_ttl_seconds`: how long an approval waits for an answer (default 300 s).
    pub ttl: time::Duration,
}

impl DeskSettings {
    /// The `approvals` object and `approval_ttl_seconds` (1 to 86,400), checked.
    pub fn validate(
        raw: Option<RawApprovalLimits>,
        ttl_seconds: Option<u64>,
    ) -> Result<Self, ConfigError> {
        let ttl = ttl_seconds.unwrap_or(300);
        if ttl == 0 || ttl > 86_400 {
            return Err(ConfigError::new(
                "approval_ttl_seconds",
                format!("{ttl} is outside 1..=86400"),
            ));
        }
        let answers = raw.clone().unwrap_or_default();
        Ok(Self {
            approving: crate::authz::approving::ApprovingSettings {
                separation_of_duties: answers.separation_of_duties.unwrap_or(true),
            },
            refusal_requires_note: answers.refusal_requires_note.unwrap_or(false),
            limits: ApprovalLimits::validate(raw)?,
            ttl: time::Duration::seconds(i64::try_from(ttl).unwrap_or(300)),
        })
    }
}

impl ApprovalLimits {
    pub fn validate(raw: Option<RawApprovalLimits>) -> Result<Self, ConfigError> {
        let raw = raw.unwrap_or_default();
        let base = Self::default();
        let per_caller = within(
            "approvals.max_pending_per_caller",
            raw.max_pending_per_caller,
            base.max_pending_per_caller,
            1..=100_000,
        )?;
        let total = within(
            "approvals.max_pending",
            raw.max_pending,
            base.max_pending,
            1..=1_000_000,
        )?;
        if per_caller > total {
            return Err(ConfigError::new(
                "approvals.max_pending_per_caller",
                format!("{per_caller} is more than `approvals.max_pending` ({total})"),
            ));
        }
        let max_held_bytes = within(
            "approvals.max_held_bytes",
            raw.max_held_bytes,
            base.max_held_bytes,
            1..=(64 * 1024 * 1024 * 1024),
        )?;
        let max_held_bytes_per_caller = within(
            "approvals.max_held_bytes_per_caller",
            raw.max_held_bytes_per_caller,
            base.max_held_bytes_per_caller.min(max_held_bytes),
            1..=max_held_bytes,
        )?;
        let limits = Self {
            max_pending_per_caller: per_caller,
            max_pending: total,
            max_held_bytes,
            max_held_bytes_per_caller,
            retention: seconds("approvals.retention_seconds", raw.retention_seconds, 600)?,
            run_deadline: seconds(
                "approvals.run_deadline_seconds",
                raw.run_deadline_seconds,
                180,
            )?,
            approve_wait: seconds(
                "approvals.approve_wait_seconds",
                raw.approve_wait_seconds,
                30,
            )?,
            sweep_interval: Duration::from_millis(within(
                "approvals.sweep_interval_ms",
                raw.sweep_interval_ms,
                1000,
                10..=60_000,
            )?),
        };
        Ok(limits)
    }
}

fn within<T>(
    field: &str,
    value: Option<T>,
    default: T,
    range: std::ops::RangeInclusive<T>,
) -> Result<T, ConfigError>
where
    T: PartialOrd + Copy + std::fmt::Display,
{
    let value = value.unwrap_or(default);
    if range.contains(&value) {
        Ok(value)
    } else {
        Err(ConfigError::new(
            field,
            format!("{value} is outside {}..={}", range.start(), range.end()),
        ))
    }
}

fn seconds(field: &str, value: Option<u64>, default: u64) -> Result<Duration, ConfigError> {
    within(field, value, default, 1..=86_400).map(Duration::from_secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_keys_take_the_defaults() {
        assert_eq!(
            ApprovalLimits::validate(None).unwrap(),
            ApprovalLimits::default()
        );
    }

    #[test]
    fn a_bound_outside_its_range_names_its_key() {
        let raw = RawApprovalLimits {
            max_pending: Some(0),
            ..RawApprovalLimits::default()
        };
        let error = ApprovalLimits::validate(Some(raw)).unwrap_err();
        assert_eq!(error.field, "approvals.max_pending");
        assert_eq!(error.message, "0 is outside 1..=1000000");
    }
}
