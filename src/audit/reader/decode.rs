//! audit::reader::decode: one line of a log file to its record, or to the problem that makes
//! it untrustworthy (torn, malformed, foreign version, unknown kind) with a short escaped prefix
//! of the line. It never panics on any bytes; finding files and splitting lines is `reader`'s.

use serde::Serialize;

use super::super::record::{ApprovalRecord, DecisionRecord, OutcomeRecord, Record, Version};
use super::RawLine;

/// How many characters of a problem line are shown.
const PREFIX_CHARS: usize = 80;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProblemKind {
    /// The last line of a file has no newline: a write cut short by a crash.
    Torn,
    Malformed,
    ForeignVersion,
    UnknownKind,
    /// The file could not be read at all.
    Unreadable,
}

impl ProblemKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Torn => "torn",
            Self::Malformed => "malformed",
            Self::ForeignVersion => "foreign_version",
            Self::UnknownKind => "unknown_kind",
            Self::Unreadable => "unreadable",
        }
    }
}

/// A line (or file) that is not a usable record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub file: String,
    /// 1-based; 0 for a whole file.
    pub line_number: usize,
    pub kind: ProblemKind,
    pub message: String,
    pub text_prefix: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogLine {
    Record(Record),
    Problem(Problem),
}

/// The record of one line, or the problem with it.
pub fn decode(file: &str, line: RawLine<'_>) -> LogLine {
    let outcome = if line.torn {
        Err((
            ProblemKind::Torn,
            "the last line has no newline (a write was cut short)".to_string(),
        ))
    } else {
        parse_record(line.text)
    };
    match outcome {
        Ok(record) => LogLine::Record(record),
        Err((kind, message)) => LogLine::Problem(Problem {
            file: file.to_string(),
            line_number: line.line_number,
            kind,
            message,
            text_prefix: prefix(line.text),
        }),
    }
}

/// Decodes one complete line straight into its typed record. Lines as the writer writes them
/// start with `{"v":<version>,"kind":"<kind>"`, so the kind is tried first by that hint;
/// anything else falls back to reading the header to say why the line is not a record. A
/// decision of format 2 gets back what it leaves out (`DecisionRecord::completed`).
pub fn parse_record(text: &[u8]) -> Result<Record, (ProblemKind, String)> {
    // The chain fields (`audit::chain`) are the log's, not the record's.
    let unchained = crate::audit::chain::split(text);
    let text = unchained
        .as_ref()
        .map_or(text, |(record, _)| record.as_slice());
    let kind = text.get(br#"{"v":1,"#.len()..).unwrap_or_default();
    let hinted = if kind.starts_with(br#""kind":"approval""#) {
        serde_json::from_slice::<ApprovalRecord>(text).map(Record::Approval)
    } else if kind.starts_with(br#""kind":"outcome""#) {
        serde_json::from_slice::<OutcomeRecord>(text).map(Record::Outcome)
    } else {
        serde_json::from_slice::<DecisionRecord>(text).map(decision)
    };
    hinted.or_else(|first_error| by_header(text, &first_error))
}

fn by_header(
    text: &[u8],
    first_error: &serde_json::Error,
) -> Result<Record, (ProblemKind, String)> {
    let value: serde_json::Value = serde_json::from_slice(text)
        .map_err(|error| (ProblemKind::Malformed, format!("not json: {error}")))?;
    let Some(object) = value.as_object() else {
        return Err((ProblemKind::Malformed, "not a json object".to_string()));
    };
    let version = object.get("v");
    if version
        .and_then(serde_json::Value::as_u64)
        .and_then(Version::of)
        .is_none()
    {
        let shown = version.map_or_else(|| "none".to_string(), ToString::to_string);
        return Err((
            ProblemKind::ForeignVersion,
            format!("record version `{shown}` is not one this build reads (1 or 2): a newer askgate wrote it"),
        ));
    }
    let malformed = |error: serde_json::Error| (ProblemKind::Malformed, error.to_string());
    match object.get("kind").and_then(serde_json::Value::as_str) {
        Some("decision") => serde_json::from_value::<DecisionRecord>(value)
            .map(decision)
            .map_err(malformed),
        Some("approval") => serde_json::from_value(value)
            .map(Record::Approval)
            .map_err(malformed),
        Some("outcome") => serde_json::from_value(value)
            .map(Record::Outcome)
            .map_err(malformed),
        Some(other) => Err((
            ProblemKind::UnknownKind,
            format!("unknown record kind `{other}`"),
        )),
        None => Err((
            ProblemKind::Malformed,
            format!("no record kind ({first_error})"),
        )),
    }
}

fn decision(record: DecisionRecord) -> Record {
    Record::Decision(Box::new(record.completed()))
}

/// The start of a line for display: lossy UTF-8, control characters escaped.
fn prefix(text: &[u8]) -> String {
    String::from_utf8_lossy(text)
        .chars()
        .take(PREFIX_CHARS)
        .flat_map(char::escape_debug)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::split_lines;
    use super::*;

    const OUTCOME: &str = r#"{"v":1,"kind":"outcome","id":"o","time":"t","decision_id":"d","status":"ok","error_kind":null}"#;

    fn kinds(bytes: &[u8]) -> Vec<Result<(), (usize, ProblemKind)>> {
        split_lines(bytes)
            .map(|line| match decode("f", line) {
                LogLine::Record(_) => Ok(()),
                LogLine::Problem(problem) => Err((problem.line_number, problem.kind)),
            })
            .collect()
    }

    #[test]
    fn a_valid_record_without_newline_is_still_torn() {
        let bytes = format!("{OUTCOME}\n{OUTCOME}");
        assert_eq!(
            kinds(bytes.as_bytes()),
            vec![Ok(()), Err((2, ProblemKind::Torn))]
        );
    }

    #[test]
    fn each_bad_line_gets_its_kind() {
        let foreign = OUTCOME.replace("\"v\":1", "\"v\":7");
        let unknown = OUTCOME.replace("outcome", "audit");
        let no_version = OUTCOME.replace("\"v\":1,", "");
        let mut text = format!("{foreign}\n{unknown}\n{no_version}\n[1]\n\n").into_bytes();
        text.extend_from_slice(b"\x00\xff\n");
        assert_eq!(
            kinds(&text),
            vec![
                Err((1, ProblemKind::ForeignVersion)),
                Err((2, ProblemKind::UnknownKind)),
                Err((3, ProblemKind::ForeignVersion)),
                Err((4, ProblemKind::Malformed)),
                Err((5, ProblemKind::Malformed)),
                Err((6, ProblemKind::Malformed)),
            ]
        );
    }

    #[test]
    fn reordered_keys_still_decode() {
        let reordered = r#"{"status":"error","error_kind":"x","decision_id":"d","time":"t","id":"o","kind":"outcome","v":1}"#;
        assert!(parse_record(reordered.as_bytes()).is_ok());
    }

    #[test]
    fn the_prefix_is_short_and_escaped() {
        let long = "\"".repeat(200);
        assert_eq!(prefix(long.as_bytes()).len(), 160);
        assert_eq!(prefix(b"a\tb\xff"), "a\\tb\u{fffd}");
    }
}
