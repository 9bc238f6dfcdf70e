//! `askgate hook install claude-code` on real files (finding H1): the entry it merges into a
//! settings file, run by a real shell as Claude Code runs it — answers pass through, and with
//! the binary gone the command exits 2, the only code that blocks.

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;

use super::harness::{Gateway, AGENT};

/// A copy of the askgate binary in a directory whose name needs quoting, to install from and
/// then delete; dropped with the directory.
pub struct InstalledCopy {
    pub binary: PathBuf,
    _dir: tempfile::TempDir,
}

impl InstalledCopy {
    pub fn new() -> InstalledCopy {
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let folder = dir.path().join("ask gate's $bin");
        std::fs::create_dir(&folder).unwrap();
        let binary = folder.join("askgate");
        // A hard link is a copy that costs nothing; the original stays when it is removed.
        if std::fs::hard_link(env!("CARGO_BIN_EXE_askgate"), &binary).is_err() {
            std::fs::copy(env!("CARGO_BIN_EXE_askgate"), &binary).unwrap();
        }
        InstalledCopy { binary, _dir: dir }
    }

    /// Runs `hook install claude-code --settings FILE ARGS` from the copy.
    pub fn install(&self, settings: &Path, args: &[&str]) -> Output {
        std::process::Command::new(&self.binary)
            .args(["hook", "install", "claude-code", "--settings"])
            .arg(settings)
            .args(args)
            .env("ASKGATE_AGENT_TOKEN", AGENT)
            .output()
            .unwrap()
    }

    pub fn remove(&self) {
        std::fs::remove_file(&self.binary).unwrap();
    }
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn askgate_hooks(settings: &Value) -> Vec<Value> {
    settings["hooks"]["PreToolUse"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|group| group["hooks"].as_array().unwrap().clone())
        .filter(|hook| {
            hook["command"]
                .as_str()
                .is_some_and(|command| command.contains("hook claude-code"))
        })
        .collect()
}

#[test]
fn install_merges_one_guarded_entry_and_keeps_everything_else() {
    let copy = InstalledCopy::new();
    let dir = tempfile::tempdir().unwrap();
    let settings = dir.path().join("settings.json");
    let theirs = json!({"model": "opus", "permissions": {"deny": ["Bash(rm:*)"]},
        "hooks": {"PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "fmt"}]}],
                  "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard"}]},
                                 {"matcher": "ClaudeDesign|Projects", "hooks": [{"type": "command",
                                  "command": "askgate hook claude-code --token old-secret"}]}]}});
    std::fs::write(&settings, theirs.to_string()).unwrap();
    let args = ["--server", "http://127.0.0.1:9", "--deadline-seconds", "15"];
    let first = copy.install(&settings, &args);
    assert!(first.status.success(), "{first:?}");
    assert!(String::from_utf8_lossy(&first.stdout).contains("updated"));
    let written = read_json(&settings);
    let keys: Vec<&String> = written.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["model", "permissions", "hooks"]);
    assert_eq!(written["permissions"], theirs["permissions"]);
    assert_eq!(
        written["hooks"]["PostToolUse"],
        theirs["hooks"]["PostToolUse"]
    );
    assert_eq!(
        written["hooks"]["PreToolUse"][0],
        theirs["hooks"]["PreToolUse"][0]
    );
    let hooks = askgate_hooks(&written);
    assert_eq!(hooks.len(), 1, "{written}");
    assert_eq!(hooks[0]["onFailure"], "block");
    assert_eq!(hooks[0]["timeout"], 25);
    let command = hooks[0]["command"].as_str().unwrap();
    assert!(
        command.ends_with("--deadline-seconds 15 || exit 2"),
        "{command}"
    );
    let text = std::fs::read_to_string(&settings).unwrap();
    assert!(
        !text.contains(AGENT) && !text.contains("old-secret"),
        "{text}"
    );
    let again = copy.install(&settings, &args);
    assert!(again.status.success(), "{again:?}");
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), text);
}

#[test]
fn install_refuses_what_it_cannot_read_and_changes_nothing() {
    let copy = InstalledCopy::new();
    let dir = tempfile::tempdir().unwrap();
    let settings = dir.path().join("settings.json");
    for (text, args, problem) in [
        ("{not json", vec![], "is not JSON"),
        (r#"{"hooks": []}"#, vec![], "`hooks` that is not an object"),
        ("{}", vec!["--deadline-seconds", "61"], "1..=60"),
        (
            "{}",
            vec!["--server", "http://me:pw@h"],
            "without user or password",
        ),
        ("{}", vec!["--mcp-server", "a.*"], "`--mcp-server`"),
    ] {
        std::fs::write(&settings, text).unwrap();
        let refused = copy.install(&settings, &args);
        assert_eq!(refused.status.code(), Some(2), "{refused:?}");
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert!(stderr.contains(problem), "{problem} in {stderr}");
        assert_eq!(std::fs::read_to_string(&settings).unwrap(), text);
    }
    let fresh = dir.path().join(".claude/settings.json");
    let created = copy.install(&fresh, &["--mcp-server", "askgate"]);
    assert!(created.status.success(), "{created:?}");
    let group = &read_json(&fresh)["hooks"]["PreToolUse"][0];
    assert_eq!(
        group["matcher"],
        "ClaudeDesign|Projects|mcp__askgate__ClaudeDesign|mcp__askgate__Projects"
    );
}

/// Runs `command` with `input` on its stdin, as the client runs a hook.
pub async fn fed(command: &mut tokio::process::Command, input: &[u8]) -> Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // A command that exits before reading (a refused flag, a missing binary) closes its stdin.
    match stdin.write_all(input).await {
        Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => panic!("{error}"),
        _ => drop(stdin),
    }
    child.wait_with_output().await.unwrap()
}

/// Runs the entry's command as the client does (`/bin/sh -c`), with the hook input on stdin.
async fn run_entry(command: &str, input: &Value) -> Output {
    let mut shell = tokio::process::Command::new("/bin/sh");
    shell
        .args(["-c", command])
        .env("ASKGATE_AGENT_TOKEN", AGENT);
    fed(&mut shell, input.to_string().as_bytes()).await
}

fn projects_input(method: &str) -> Value {
    json!({"session_id": "s1", "hook_event_name": "PreToolUse", "permission_mode": "default",
           "tool_name": "Projects", "tool_input": {"method": method, "path": "notes.md"},
           "tool_use_id": "toolu_01"})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h1_the_installed_command_passes_answers_through_and_blocks_without_its_binary() {
    let gateway = Gateway::start_with(|raw| {
        raw.policies = Some(vec!["policies/examples".into()]);
    })
    .await;
    let copy = InstalledCopy::new();
    let dir = tempfile::tempdir().unwrap();
    let settings = dir.path().join("settings.json");
    let installed = copy.install(&settings, &["--server", &gateway.url]);
    assert!(installed.status.success(), "{installed:?}");
    let hooks = askgate_hooks(&read_json(&settings));
    let command = hooks[0]["command"].as_str().unwrap().to_string();
    let allowed = run_entry(&command, &projects_input("project_info")).await;
    assert_eq!(allowed.status.code(), Some(0), "{allowed:?}");
    assert_eq!(allowed.stdout, b"{}\n");
    let asked = run_entry(&command, &projects_input("project_delete")).await;
    assert_eq!(asked.status.code(), Some(0), "{asked:?}");
    let answer: Value = serde_json::from_slice(&asked.stdout).unwrap();
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "ask");
    copy.remove();
    let gone = run_entry(&command, &projects_input("project_info")).await;
    assert_eq!(gone.status.code(), Some(2), "{gone:?}");
    assert!(gone.stdout.is_empty(), "{gone:?}");
}
