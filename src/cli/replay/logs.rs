//! cli::replay::logs: the decision logs a command line names, read for `replay` and
//! `diff --replay` alike. Every named log must hold a readable record: a log whose lines are
//! all problems (or that has no lines, or no log files) would make a replay that says nothing
//! changed, so it is an error listing its problem lines.

use std::path::PathBuf;

use crate::audit::reader::{decode, read_bytes, split_lines, LogLine, Problem};
use crate::audit::replay::LogText;
use crate::audit::{log_files, ReadError};

/// How many problem lines an unusable log's error lists.
const LISTED: usize = 20;

/// Every file of every named log; an unreadable file, or a log without a readable record,
/// fails the whole read.
pub fn read(paths: &[PathBuf]) -> Result<Vec<LogText>, String> {
    let mut texts = Vec::new();
    for path in paths {
        let files = log_files(std::slice::from_ref(path)).map_err(|error| error.to_string())?;
        let mut found = Vec::new();
        for file in files {
            let bytes = read_bytes(&file).map_err(|message| {
                ReadError {
                    path: file.display().to_string(),
                    message,
                }
                .to_string()
            })?;
            found.push(LogText {
                file: file.display().to_string(),
                bytes,
            });
        }
        if let Some(problems) = without_records(&found) {
            return Err(unusable(path, &found, &problems));
        }
        texts.extend(found);
    }
    Ok(texts)
}

/// The problem lines of `texts` when none of their lines is a record (`None` as soon as one is).
fn without_records(texts: &[LogText]) -> Option<Vec<Problem>> {
    let mut problems = Vec::new();
    for text in texts {
        for line in split_lines(&text.bytes) {
            match decode(&text.file, line) {
                LogLine::Record(_) => return None,
                LogLine::Problem(problem) => problems.push(problem),
            }
        }
    }
    Some(problems)
}

fn unusable(path: &std::path::Path, texts: &[LogText], problems: &[Problem]) -> String {
    let why = if texts.is_empty() {
        "no log file"
    } else if problems.is_empty() {
        "no lines"
    } else {
        "no readable record"
    };
    let mut message = format!(
        "the log `{}` holds {why}: nothing can be replayed",
        path.display()
    );
    for problem in problems.iter().take(LISTED) {
        message.push_str(&format!(
            "\n  {}:{}: {}: {} `{}`",
            problem.file,
            problem.line_number,
            problem.kind.as_str(),
            problem.message,
            problem.text_prefix
        ));
    }
    if problems.len() > LISTED {
        message.push_str(&format!(
            "\n  … and {} more problem lines",
            problems.len() - LISTED
        ));
    }
    message
}
