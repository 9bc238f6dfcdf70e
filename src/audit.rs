//! audit: the decision log — versioned records (`record`), the durable group-commit writer
//! (`writer`), log file naming (`files`), the reader that reports torn and bad lines
//! (`reader`), replay against a policy set (`replay`), person-facing queries (`query`) and approval
//! fatigue (`fatigue`: which asks are approved every time, by whom).
//! It records and re-evaluates decisions; it never makes one (that is `authz`).

pub mod chain;
pub mod fatigue;
pub mod files;
pub mod query;
pub mod reader;
pub mod record;
pub mod replay;
pub mod writer;

pub use reader::{log_files, read_log, LogLine, Problem, ProblemKind, ReadError};
pub use record::{
    ApprovalAction, ApprovalRecord, DecisionOrigin, DecisionRecord, OutcomeRecord, OutcomeStatus,
    Record, ShadowRecord, Verdict, FORMAT_VERSION,
};
pub use replay::{compare, replay, Change, LogText, ReplayReport, ReplaySets};
pub use writer::{DecisionLog, Durability, LogError, LogFailure, LogOptions};
