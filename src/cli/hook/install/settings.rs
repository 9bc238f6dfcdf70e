//! cli::hook::install::settings: askgate's `PreToolUse` entry in a Claude Code settings file —
//! the guarded shell command, merging it into what the file already holds (every other key,
//! event and hook kept in place, askgate's earlier entries replaced and the tools they matched
//! kept in the new matcher), and writing the file
//! whole (a temporary file renamed over it). Must not write a token, nor a file it could not
//! read as settings.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use super::InstallError;

/// The subcommand that marks a hook as askgate's, in this entry and in hand-written ones.
const HOOK_SUBCOMMAND: &str = "hook claude-code";

/// What the entry runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookEntry {
    pub matcher: String,
    pub binary: String,
    pub server: String,
    pub deadline_seconds: u64,
    pub timeout_seconds: u64,
}

/// What merging did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Merged {
    pub settings: Value,
    /// An askgate entry was there before (and is replaced).
    pub replaced: bool,
    /// The matcher written: the entry's tools and every askgate tool an earlier entry matched.
    pub matcher: String,
    /// The tools kept from earlier entries that this run did not name (A5).
    pub kept: Vec<String>,
}

impl HookEntry {
    /// The command the client's shell runs: the binary, quoted; any non-zero exit of it
    /// (127 when it is missing, a crash, any code but 2) becomes 2, the only code that blocks.
    pub fn command(&self) -> String {
        format!(
            "{} {HOOK_SUBCOMMAND} --server {} --deadline-seconds {} || exit 2",
            shell_quoted(&self.binary),
            shell_quoted(&self.server),
            self.deadline_seconds
        )
    }

    /// The matcher group, as Claude Code reads it.
    #[cfg(test)]
    pub fn group(&self) -> Value {
        self.group_matching(&self.matcher)
    }

    fn group_matching(&self, matcher: &str) -> Value {
        json!({
            "matcher": matcher,
            "hooks": [{
                "type": "command",
                "command": self.command(),
                "timeout": self.timeout_seconds,
                "onFailure": "block",
            }],
        })
    }
}

/// One POSIX shell word: single-quoted, each `'` written as `'\''`.
fn shell_quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// Reads `path` (absent or blank: no settings yet), merges the entry, writes it back.
pub fn write(path: &Path, entry: &HookEntry) -> Result<Merged, InstallError> {
    let target = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let shown = path.display().to_string();
    let existing = match std::fs::read_to_string(&target) {
        Ok(text) => Some(text),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
        Err(error) => return Err(settings_problem(&shown, format!("cannot be read: {error}"))),
    };
    let settings = match existing.as_deref().map(str::trim) {
        None | Some("") => Value::Object(Map::new()),
        Some(text) => serde_json::from_str(text)
            .map_err(|error| settings_problem(&shown, format!("is not JSON: {error}")))?,
    };
    let merged = merge(settings, entry).map_err(|problem| settings_problem(&shown, problem))?;
    let mut text = serde_json::to_string_pretty(&merged.settings)
        .map_err(|error| settings_problem(&shown, error.to_string()))?;
    text.push('\n');
    replace_file(&target, text.as_bytes())
        .map_err(|error| InstallError::Write { path: shown, error })?;
    Ok(merged)
}

fn settings_problem(path: &str, problem: String) -> InstallError {
    InstallError::Settings {
        path: path.to_string(),
        problem,
    }
}

/// `settings` with askgate's hooks taken out of every `PreToolUse` group (a group left
/// empty goes) and the entry's group appended. The tools an earlier askgate entry matched are
/// merged into the new matcher (A5): installing for the built-in tools after installing for
/// the MCP tools (or the other way round) keeps both.
pub fn merge(mut settings: Value, entry: &HookEntry) -> Result<Merged, String> {
    let root = settings
        .as_object_mut()
        .ok_or("does not hold a JSON object")?;
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or("has a `hooks` that is not an object")?;
    let groups = hooks
        .entry("PreToolUse")
        .or_insert_with(|| Value::Array(Vec::new()))
        .as_array_mut()
        .ok_or("has a `hooks.PreToolUse` that is not an array")?;
    let mut replaced = false;
    let mut earlier: Vec<String> = Vec::new();
    groups.retain_mut(|group| {
        let matcher = group
            .get("matcher")
            .and_then(Value::as_str)
            .map(str::to_string);
        let Some(handlers) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
            return true;
        };
        let count = handlers.len();
        handlers.retain(|handler| !is_askgate_hook(handler));
        if handlers.len() < count {
            replaced = true;
            earlier.extend(matcher.iter().flat_map(|matcher| askgate_tools(matcher)));
        }
        !(handlers.is_empty() && count > 0)
    });
    let mut tools: Vec<String> = entry.matcher.split('|').map(str::to_string).collect();
    let mut kept = Vec::new();
    for tool in earlier {
        if !tools.contains(&tool) {
            tools.push(tool.clone());
            kept.push(tool);
        }
    }
    let matcher = tools.join("|");
    groups.push(entry.group_matching(&matcher));
    Ok(Merged {
        settings,
        replaced,
        matcher,
        kept,
    })
}

/// The names in a matcher that are askgate's tools: `ClaudeDesign`, `Projects`, or the MCP
/// tools of a server (`mcp__NAME__ClaudeDesign`); anything else (`*`, a regex) is not kept.
fn askgate_tools(matcher: &str) -> Vec<String> {
    let name_ok = |name: &str| {
        !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    matcher
        .split('|')
        .filter(|tool| {
            let tool_name = |name: &str| matches!(name, "ClaudeDesign" | "Projects");
            tool_name(tool)
                || tool
                    .strip_prefix("mcp__")
                    .and_then(|rest| rest.rsplit_once("__"))
                    .is_some_and(|(server, name)| name_ok(server) && tool_name(name))
        })
        .map(str::to_string)
        .collect()
}

/// A command hook running `… hook claude-code …`: this entry, or one written by hand.
fn is_askgate_hook(handler: &Value) -> bool {
    handler.get("type").and_then(Value::as_str) == Some("command")
        && handler
            .get("command")
            .and_then(Value::as_str)
            .is_some_and(|command| command.contains(HOOK_SUBCOMMAND))
}

/// Writes `bytes` to a temporary file beside `target`, with `target`'s permissions when it
/// exists, and renames it over `target`: the client never reads half a file.
fn replace_file(target: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let directory = match target.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&directory)?;
    let name = target
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temporary = directory.join(format!(".{name}.askgate-{}.tmp", std::process::id()));
    let written =
        write_new(&temporary, target, bytes).and_then(|()| std::fs::rename(&temporary, target));
    if written.is_err() {
        let _ignored = std::fs::remove_file(&temporary);
    }
    written
}

fn write_new(temporary: &Path, target: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(temporary)?;
    if let Ok(metadata) = std::fs::metadata(target) {
        file.set_permissions(metadata.permissions())?;
    }
    file.write_all(bytes)?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> HookEntry {
        HookEntry {
            matcher: "ClaudeDesign|Projects".to_string(),
            binary: "/opt/it's here/askgate".to_string(),
            server: "http://127.0.0.1:8080".to_string(),
            deadline_seconds: 10,
            timeout_seconds: 20,
        }
    }

    #[test]
    fn the_command_quotes_each_word_and_maps_every_failure_to_exit_2() {
        let expected = concat!(
            r"'/opt/it'\''s here/askgate' hook claude-code",
            " --server 'http://127.0.0.1:8080' --deadline-seconds 10 || exit 2"
        );
        assert_eq!(entry().command(), expected);
        let group = entry().group();
        assert_eq!(group["hooks"][0]["onFailure"], "block");
        assert_eq!(group["hooks"][0]["timeout"], 20);
        assert!(!group.to_string().contains("token"), "{group}");
    }

    #[test]
    fn merging_keeps_every_other_key_and_hook_in_place() {
        let theirs = json!({"model": "opus", "hooks": {
            "PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "fmt"}]}],
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard"}]}]},
            "permissions": {"deny": ["Bash(rm:*)"]}});
        let merged = merge(theirs.clone(), &entry()).unwrap();
        assert!(!merged.replaced);
        let keys: Vec<&String> = merged.settings.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["model", "hooks", "permissions"]);
        let hooks = &merged.settings["hooks"];
        assert_eq!(hooks["PostToolUse"], theirs["hooks"]["PostToolUse"]);
        assert_eq!(hooks["PreToolUse"][0], theirs["hooks"]["PreToolUse"][0]);
        assert_eq!(hooks["PreToolUse"][1], entry().group());
        assert_eq!(merged.settings["permissions"], theirs["permissions"]);
    }

    #[test]
    fn merging_twice_leaves_one_entry_updated() {
        let once = merge(json!({}), &entry()).unwrap().settings;
        let mut later = entry();
        later.deadline_seconds = 30;
        let twice = merge(once.clone(), &later).unwrap();
        assert!(twice.replaced);
        assert_eq!(
            twice.settings["hooks"]["PreToolUse"],
            json!([later.group()])
        );
        assert_eq!(
            merge(twice.settings.clone(), &later).unwrap().settings,
            twice.settings
        );
    }

    #[test]
    fn a_hand_written_askgate_hook_is_replaced_and_its_neighbours_kept() {
        let old = json!({"type": "command", "command": "askgate hook claude-code --token t"});
        let mine = json!({"type": "command", "command": "audit"});
        let settings = json!({"hooks": {"PreToolUse": [
            {"matcher": "ClaudeDesign|Projects", "hooks": [old.clone()]},
            {"matcher": "*", "hooks": [old, mine.clone()]}]}});
        let merged = merge(settings, &entry()).unwrap();
        assert!(merged.replaced);
        assert_eq!(
            merged.settings["hooks"]["PreToolUse"],
            json!([{"matcher": "*", "hooks": [mine]}, entry().group()])
        );
    }

    /// A5: agents.md's two commands in its order — first with `--mcp-server askgate`, then
    /// without — keep the MCP tools, and the other order adds them.
    #[test]
    fn a5_installing_twice_merges_the_matchers() {
        let mcp = "ClaudeDesign|Projects|mcp__askgate__ClaudeDesign|mcp__askgate__Projects";
        let mut with_mcp = entry();
        with_mcp.matcher = mcp.to_string();
        let once = merge(json!({}), &with_mcp).unwrap().settings;
        let twice = merge(once, &entry()).unwrap();
        assert!(twice.replaced);
        assert_eq!(twice.matcher, mcp);
        assert_eq!(
            twice.kept,
            ["mcp__askgate__ClaudeDesign", "mcp__askgate__Projects"]
        );
        let groups = twice.settings["hooks"]["PreToolUse"].as_array().unwrap();
        assert_eq!(groups.len(), 1, "{groups:?}");
        assert_eq!(groups[0]["matcher"], mcp);
        let back = merge(twice.settings.clone(), &with_mcp).unwrap();
        assert_eq!(back.matcher, mcp);
        assert!(back.kept.is_empty());
        // A hand-written `*` group is not widened into the entry.
        let star = json!({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
            {"type": "command", "command": "askgate hook claude-code"}]}]}});
        assert_eq!(
            merge(star, &entry()).unwrap().matcher,
            "ClaudeDesign|Projects"
        );
    }

    #[test]
    fn settings_of_another_shape_are_refused() {
        for (settings, problem) in [
            (json!([]), "does not hold a JSON object"),
            (json!({"hooks": []}), "`hooks` that is not an object"),
            (
                json!({"hooks": {"PreToolUse": {}}}),
                "`hooks.PreToolUse` that is not an array",
            ),
        ] {
            assert!(merge(settings, &entry()).unwrap_err().contains(problem));
        }
    }
}
