//! Every fenced `sh` example of the README and `docs/` runs as written (issue 33 §3).
//!
//! Each example is one bash script (`set -euo pipefail`) run in a fresh directory that links
//! the repository's `policies/`, `schema/`, `tests/` and `benches/`, with `HOME` a fresh
//! directory too, `askgate` (this build) and the pinned Claude Code client on `PATH`, and no
//! network but a private loopback of its own (`unshare`: a new network and PID namespace), so
//! its `127.0.0.1:8080` is free and everything it starts ends with it. Unless the example
//! starts `askgate serve` itself, the demo `askgate serve` (embedded defaults, in-process
//! sandbox) answers on `127.0.0.1:8080` first — the instance the docs talk to. Offline: no
//! example may need the Internet or the Messages API.
//!
//! Conventions the docs follow (and this runner reads):
//! - A command ending in the comment `# exit N` must exit with `N` (e.g. `diff`'s 5).
//! - A line that starts `askgate serve … &` is followed by a wait until its `/healthz`
//!   answers, as a person waits for `serve` to say it listens.
//! - An example that cannot run here is marked on the line just above its fence with
//!   `<!-- not run: REASON -->` (it needs PostgreSQL, builds the release binary, runs the test
//!   suite); the reason must say why. Nothing else is skipped.

use std::path::{Path, PathBuf};
use std::process::Command;

/// One fenced `sh` example.
#[derive(Debug, Clone)]
pub struct Example {
    /// `docs/agents.md:8`.
    pub place: String,
    pub text: String,
    /// Why it is not run (`<!-- not run: … -->` above its fence).
    pub not_run: Option<String>,
}

const NOT_RUN: &str = "<!-- not run:";

/// The `sh` examples of `files`, in order.
pub fn examples(root: &Path, files: &[PathBuf]) -> Vec<Example> {
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file).unwrap();
        let name = file
            .strip_prefix(root)
            .unwrap_or(file)
            .display()
            .to_string();
        let lines: Vec<&str> = text.lines().collect();
        let mut index = 0;
        while index < lines.len() {
            let line = lines[index].trim_start();
            let opens_sh = line == "```sh" || line.starts_with("```sh ");
            if !opens_sh {
                if line.starts_with("```") {
                    // Another language's fence: skip to its end.
                    index += 1;
                    while index < lines.len() && !lines[index].trim_start().starts_with("```") {
                        index += 1;
                    }
                }
                index += 1;
                continue;
            }
            let not_run = index
                .checked_sub(1)
                .map(|above| lines[above].trim())
                .and_then(|above| above.strip_prefix(NOT_RUN))
                .map(|reason| reason.trim_end_matches("-->").trim().to_string());
            let start = index + 1;
            let mut end = start;
            while end < lines.len() && !lines[end].trim_start().starts_with("```") {
                end += 1;
            }
            found.push(Example {
                place: format!("{name}:{}", index + 1),
                text: lines[start..end.min(lines.len())].join("\n"),
                not_run,
            });
            index = end + 1;
        }
    }
    found
}

/// Logical lines: a line ending in `\` continues on the next; a heredoc's body stays with
/// the line that opens it.
fn logical_lines(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let mut logical = line.to_string();
        while logical.ends_with('\\') {
            let Some(next) = lines.next() else { break };
            logical.push('\n');
            logical.push_str(next);
        }
        if let Some(terminator) = heredoc_terminator(&logical) {
            for body in lines.by_ref() {
                logical.push('\n');
                logical.push_str(body);
                if body.trim() == terminator {
                    break;
                }
            }
        }
        out.push(logical);
    }
    out
}

fn heredoc_terminator(line: &str) -> Option<String> {
    let at = line.find("<<")?;
    let word = line[at + 2..].trim_start_matches('-').trim_start();
    let word: String = word
        .chars()
        .filter(|c| *c != '\'' && *c != '"')
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    (!word.is_empty()).then_some(word)
}

/// The trailing `# exit N` of a command, if any.
fn expected_exit(line: &str) -> Option<i32> {
    let comment = line.lines().last()?.rsplit_once(" #")?.1.trim();
    let code = comment.strip_prefix("exit ")?;
    code.split_whitespace().next()?.parse().ok()
}

/// `askgate serve … &`: the address it listens on.
fn serves_in_background(line: &str) -> Option<String> {
    let command = line.split(" #").next().unwrap_or(line).trim();
    if !command.starts_with("askgate serve") || !command.ends_with('&') {
        return None;
    }
    let words: Vec<&str> = command.split_whitespace().collect();
    let listen = words
        .windows(2)
        .find(|pair| pair[0] == "--listen")
        .map(|pair| pair[1].to_string());
    Some(listen.unwrap_or_else(|| "127.0.0.1:8080".to_string()))
}

const PRELUDE: &str = r#"set -euo pipefail
ip link set lo up
trap 'kill $(jobs -p) 2>/dev/null || true' EXIT
healthy() {
  for _ in $(seq 1 300); do
    if curl -sf "http://$1/healthz" >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  echo "askgate did not answer at $1/healthz" >&2
  return 1
}
"#;

/// The script that runs `example` as written, with the conventions above.
pub fn script(example: &Example) -> String {
    let mut script = PRELUDE.to_string();
    let lines = logical_lines(&example.text);
    if !lines
        .iter()
        .any(|line| line.trim_start().starts_with("askgate serve"))
    {
        script.push_str("askgate serve >served.log 2>&1 &\nhealthy 127.0.0.1:8080\n");
    }
    for line in lines {
        match expected_exit(&line) {
            Some(code) => script.push_str(&format!(
                "set +e\n{line}\n__status=$?\nset -e\n[ \"$__status\" = {code} ] || {{ echo \"expected exit {code}, got $__status\" >&2; exit 1; }}\n"
            )),
            None => {
                script.push_str(&line);
                script.push('\n');
            }
        }
        if let Some(address) = serves_in_background(&line) {
            script.push_str(&format!("healthy {address}\n"));
        }
    }
    script
}

/// What running an example came to.
pub struct Ran {
    pub ok: bool,
    pub output: String,
}

/// Runs `example` in its own directory, home and namespaces; `path` is what `PATH` holds.
pub fn run(root: &Path, example: &Example, path: &str) -> Ran {
    let work = tempfile::tempdir().unwrap();
    for linked in ["policies", "schema", "tests", "benches"] {
        std::os::unix::fs::symlink(root.join(linked), work.path().join(linked)).unwrap();
    }
    let home = work.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let script = work.path().join(".example.sh");
    std::fs::write(&script, self::script(example)).unwrap();
    let output = Command::new("timeout")
        .args(["-k", "5", "240", "unshare", "-rn", "--pid", "--fork", "--kill-child"])
        .arg("bash")
        .arg(&script)
        .current_dir(work.path())
        .env_clear()
        .env("PATH", path)
        .env("HOME", &home)
        .env("LANG", "C.UTF-8")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_TELEMETRY", "1")
        .output()
        .unwrap_or_else(|error| panic!("`timeout`/`unshare`/`bash` could not run ({error}): install coreutils, util-linux and bash"));
    let served = std::fs::read_to_string(work.path().join("served.log")).unwrap_or_default();
    Ran {
        ok: output.status.success(),
        output: format!(
            "status {}\n--- stdout\n{}\n--- stderr\n{}\n--- served.log\n{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr),
            served
        ),
    }
}

#[test]
fn the_runner_reads_fences_markers_exits_and_background_services() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.md");
    std::fs::write(
        &file,
        "```json\n{\"x\": 1}\n```\n```sh\naskgate diff a b   # exit 5\n```\n\
         <!-- not run: needs PostgreSQL -->\n```sh\naskgate serve --store postgres://x\n```\n\
         ```sh\naskgate serve --listen 127.0.0.1:9 &\ncat <<'J'\n# exit 3\nJ\n```\n",
    )
    .unwrap();
    let found = examples(dir.path(), &[file]);
    assert_eq!(found.len(), 3, "{found:?}");
    assert_eq!(found[0].place, "a.md:4");
    assert_eq!(found[1].not_run.as_deref(), Some("needs PostgreSQL"));
    let first = script(&found[0]);
    assert!(first.contains("askgate serve >served.log"), "{first}");
    assert!(first.contains("[ \"$__status\" = 5 ]"), "{first}");
    let third = script(&found[2]);
    assert!(!third.contains("served.log"), "{third}");
    assert!(third.contains("&\nhealthy 127.0.0.1:9\n"), "{third}");
    assert!(
        !third.contains("__status"),
        "a heredoc's body is not a command: {third}"
    );
}
