//! Reading a test service's decision log back: the decision records, in order.

use serde_json::Value;

/// The decision records of every log file in `dir`, in order.
pub fn logged(dir: &std::path::Path) -> Vec<Value> {
    records(dir)
        .into_iter()
        .filter(|record| record["kind"] == "decision")
        .collect()
}

/// Whether `path` is one of the log's own files (not the checkpoint key kept beside them).
pub fn is_log_file(path: &std::path::Path) -> bool {
    path.file_name()
        .and_then(|name| name.to_str())
        .is_some_and(|name| askgate::audit::files::parse_log_name(name).is_some())
}

/// Every record of every log file in `dir`, in order.
pub fn records(dir: &std::path::Path) -> Vec<Value> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| is_log_file(path))
        .collect();
    files.sort();
    files
        .iter()
        .flat_map(|file| {
            std::fs::read_to_string(file)
                .unwrap()
                .lines()
                .map(|line| serde_json::from_str::<Value>(line).unwrap())
                .collect::<Vec<_>>()
        })
        .collect()
}
