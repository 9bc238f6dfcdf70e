//! P10 (findings/trust-2026-12-04.md): `askgate log` and `askgate replay` take only regular
//! log files of a bounded size. A directory shared by replicas, or copied from a compromised
//! host, may hold a `decisions-*.jsonl` that is a FIFO (reading it would never end), a link to
//! a device (endless bytes) or a huge sparse file (its size in memory): each is refused by
//! name, the commands end at once with the unreadable exit code, and memory is never spent on
//! them.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// Runs askgate with `args`, failing the test if it has not ended within 60 s.
fn askgate(args: &[&str]) -> (i32, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_askgate"))
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("askgate runs");
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            let mut stderr = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
            return (status.code().unwrap_or(-1), stderr);
        }
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("askgate {args:?} did not end within 60 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn planted(dir: &Path, what: &str) {
    let path = dir.join("decisions-000001.jsonl");
    match what {
        "fifo" => {
            let made = Command::new("mkfifo").arg(&path).status().unwrap();
            assert!(made.success());
        }
        "device" => std::os::unix::fs::symlink("/dev/zero", &path).unwrap(),
        "sparse" => {
            let file = std::fs::File::create(&path).unwrap();
            file.set_len(2 * 1024 * 1024 * 1024).unwrap();
        }
        other => unreachable!("{other}"),
    }
}

#[test]
fn p10_log_and_replay_refuse_a_fifo_a_device_link_and_an_oversized_file_by_name() {
    for (what, says) in [
        ("fifo", "is not a regular file"),
        ("device", "is not a regular file"),
        ("sparse", "more than the 268435456 a log file can be"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        planted(dir.path(), what);
        let logs = dir.path().to_str().unwrap();
        for args in [
            vec!["log", "stats", logs],
            vec!["log", "tail", logs],
            vec!["replay", logs],
            vec!["log", "verify", logs],
        ] {
            let (code, stderr) = askgate(&args);
            assert_eq!(code, 4, "{what} {args:?}: {stderr}");
            assert!(
                stderr.contains("decisions-000001.jsonl") && stderr.contains(says),
                "{what} {args:?}: {stderr}"
            );
        }
    }
}
