//! layers: the crate's top-level modules are layered (SPEC §1), and no module's code imports a
//! module of a higher layer. Reads `src/**/*.rs`, finds every `crate::<module>` path outside
//! comments and test code (`tests.rs`, `*_tests.rs`, and what follows `#[cfg(test)]`), and fails
//! naming the file and the import that runs back up.

use std::path::{Path, PathBuf};

/// The layers, lowest first; a module may import its own layer and those below it.
const LAYERS: &[&[&str]] = &[
    &["paths", "identity", "call", "sandbox", "trace"],
    &["state", "authz"],
    &["facts", "sources"],
    &["audit", "executor", "scenario"],
    &["store"],
    &["server", "analysis"],
    &["cli"],
];

fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("src is readable")
        .map(|entry| entry.expect("entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

/// The file's code without test code and without comments.
fn code(path: &Path, text: &str) -> String {
    let name = path
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or("");
    if name == "tests.rs" || name.ends_with("_tests.rs") {
        return String::new();
    }
    let text = text.split("#[cfg(test)]").next().unwrap_or("");
    text.lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level modules named by the `crate::` paths in `code`, grouped imports included.
fn imported(code: &str) -> Vec<String> {
    imported_after(code, "crate::")
}

/// The modules named right after `prefix` (`crate::`, `crate::server::`, `super::`) in `code`.
fn imported_after(code: &str, prefix: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find(prefix) {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + prefix.len()..];
        if before.is_some_and(|ch| ch.is_alphanumeric() || ch == '_' || ch == ':') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0usize;
            let mut item = String::new();
            let mut items = Vec::new();
            for ch in group.chars() {
                match ch {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => items.push(std::mem::take(&mut item)),
                    _ => {}
                }
                item.push(ch);
            }
            items.push(item);
            for item in items {
                found.push(head(item.trim_start_matches(',')));
            }
        } else {
            found.push(head(rest));
        }
    }
    found
}

fn head(path: &str) -> String {
    path.trim_start()
        .chars()
        .take_while(|ch| ch.is_alphanumeric() || *ch == '_')
        .collect()
}

/// Every import under `root` that runs from a module up to one of a higher layer: `layer` places
/// a module (the first component of a file's path under `root`), `imports` names the modules a
/// file's code imports (given the code and whether the file lies directly under `root`).
fn back_up(
    root: &Path,
    layer: impl Fn(&str) -> Option<usize>,
    imports: impl Fn(&str, bool) -> Vec<String>,
) -> Vec<String> {
    let mut files = Vec::new();
    sources(root, &mut files);
    let mut wrong = Vec::new();
    for file in files {
        let relative = file.strip_prefix(root).expect("under the root");
        let top = relative
            .components()
            .next()
            .and_then(|part| part.as_os_str().to_str())
            .unwrap_or("")
            .trim_end_matches(".rs")
            .to_string();
        let Some(own) = layer(&top) else { continue };
        let text = std::fs::read_to_string(&file).expect("source is readable");
        let direct = relative.components().count() == 1;
        for module in imports(&code(&file, &text), direct) {
            if layer(&module).is_some_and(|theirs| theirs > own) {
                wrong.push(format!("{}: `{module}` is above {top}", relative.display()));
            }
        }
    }
    wrong.sort();
    wrong.dedup();
    wrong
}

/// Every import in `src` that runs from a module up to a module of a higher layer.
fn arrows_back_up(src: &Path) -> Vec<String> {
    back_up(src, layer, |code, _| imported(code))
}

#[test]
fn no_module_imports_a_higher_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let wrong = arrows_back_up(&src);
    assert!(
        wrong.is_empty(),
        "imports that run back up:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn every_top_level_module_has_a_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).expect("lib.rs");
    for line in lib.lines() {
        if let Some(module) = line.strip_prefix("pub mod ") {
            let module = module.trim_end_matches(';');
            assert!(layer(module).is_some(), "`{module}` has no layer in LAYERS");
        }
    }
}

#[test]
fn grouped_and_nested_imports_are_read() {
    let code = "use crate::{authz::{A, B}, state::C};\nlet x = crate::server::f();";
    assert_eq!(imported(code), ["authz", "state", "server"]);
}

/// Inside `server`, lowest first: what the pipeline stands on, the pipeline, the features (each
/// on its own state with its own router), and what assembles them. A module may import its own
/// group and those below it.
const SERVER_LAYERS: &[&[&str]] = &[
    &[
        "clock",
        "error",
        "prepared",
        "account",
        "attest",
        "reload",
        "policies",
        "present",
        "caller",
        "wire",
        "notify",
        "execute",
        "observe",
        "metrics",
        "journal",
        "config",
        "body",
        "listen",
        "auth",
        "telemetry",
    ],
    &["gateway", "approving", "intake"],
    &["routes", "hook", "mcp", "console", "admin"],
    &["app", "boot"],
];

fn server_layer(module: &str) -> Option<usize> {
    SERVER_LAYERS
        .iter()
        .position(|layer| layer.contains(&module))
}

/// Every import inside `src/server` from a module up to one of a higher server layer: paths
/// `crate::server::X` anywhere, and `super::X` in the files directly under `src/server/`.
fn server_arrows_back_up(server: &Path) -> Vec<String> {
    back_up(server, server_layer, |code, direct| {
        let mut modules = imported_after(code, "crate::server::");
        if direct {
            modules.extend(imported_after(code, "super::"));
        }
        modules
    })
}

#[test]
fn inside_the_server_no_module_imports_a_higher_layer() {
    let server = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/server");
    let wrong = server_arrows_back_up(&server);
    assert!(
        wrong.is_empty(),
        "server imports that run back up:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn every_server_module_has_a_layer() {
    let root = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/server.rs"))
        .expect("server.rs");
    for line in root.lines() {
        if let Some(name) = line
            .strip_prefix("pub mod ")
            .or_else(|| line.strip_prefix("mod "))
        {
            let name = name.trim_end_matches(';');
            assert!(
                server_layer(name).is_some(),
                "server::{name} has no place in SERVER_LAYERS"
            );
        }
    }
}

#[test]
fn the_server_check_sees_an_import_that_runs_back_up() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("gateway.rs"),
        "use super::console::ConsoleState;\nuse crate::server::hook::router;\n",
    )
    .expect("written");
    let wrong = server_arrows_back_up(dir.path());
    assert_eq!(wrong.len(), 2, "{wrong:?}");
}
