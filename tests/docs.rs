//! The README and `docs/` link where they say: every relative link names a file or directory
//! that exists, and every `#anchor` names a heading of the file it points into (GitHub's
//! heading slugs). Web links are not fetched (CI has no business depending on other sites).
//! And their commands run as written: every fenced `sh` example ([`commands`]).

mod commands;
mod findings;
mod glossary;
mod layout;

use std::path::{Path, PathBuf};

/// A link that does not resolve, said as `file: target (why)`.
fn broken_links(root: &Path) -> Vec<String> {
    let mut broken = Vec::new();
    for file in markdown_files(root) {
        let text = std::fs::read_to_string(&file).unwrap();
        for target in link_targets(&text) {
            if let Err(why) = resolve(&file, &target) {
                broken.push(format!(
                    "{}: ({target}) {why}",
                    file.strip_prefix(root).unwrap_or(&file).display()
                ));
            }
        }
    }
    broken
}

fn markdown_files(root: &Path) -> Vec<PathBuf> {
    let mut files = vec![root.join("README.md")];
    let docs = root.join("docs");
    if let Ok(entries) = std::fs::read_dir(&docs) {
        let mut found: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
            .collect();
        found.sort();
        files.extend(found);
    }
    files
}

/// The targets of inline links `[text](target)` and images, outside code spans and fences.
fn link_targets(text: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut in_fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        let mut rest = without_code_spans(line);
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            let target = after[..end].split_whitespace().next().unwrap_or("");
            targets.push(target.to_string());
            rest = after[end..].to_string();
        }
    }
    targets
}

fn without_code_spans(line: &str) -> String {
    line.split('`')
        .enumerate()
        .filter(|(index, _)| index % 2 == 0)
        .map(|(_, part)| part)
        .collect::<Vec<_>>()
        .join(" ")
}

fn resolve(file: &Path, target: &str) -> Result<(), String> {
    if target.is_empty() {
        return Err("empty link".to_string());
    }
    if target.starts_with("http://") || target.starts_with("https://") {
        return Ok(());
    }
    let (path, anchor) = match target.split_once('#') {
        Some((path, anchor)) => (path, Some(anchor)),
        None => (target, None),
    };
    let dir = file.parent().unwrap_or(Path::new("."));
    let linked = if path.is_empty() {
        file.to_path_buf()
    } else {
        dir.join(path)
    };
    if !linked.exists() {
        return Err(format!("no such file: {}", linked.display()));
    }
    let Some(anchor) = anchor else { return Ok(()) };
    let text = std::fs::read_to_string(&linked)
        .map_err(|error| format!("an anchor into an unreadable file ({error})"))?;
    if headings(&text)
        .iter()
        .any(|heading| slug(heading) == anchor)
    {
        Ok(())
    } else {
        Err(format!("no heading #{anchor} in {}", linked.display()))
    }
}

fn headings(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut in_fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
        } else if !in_fence && line.starts_with('#') {
            found.push(line.trim_start_matches('#').trim().to_string());
        }
    }
    found
}

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens.
fn slug(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

#[test]
fn every_link_in_the_readme_and_docs_resolves() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let broken = broken_links(root);
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_link_check_reports_a_missing_file_and_a_missing_heading() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("docs")).unwrap();
    std::fs::write(
        dir.path().join("README.md"),
        "# Top\n[ok](docs/a.md#a-heading-v2) [gone](docs/missing.md) `[code](nowhere.md)`\n\
         [self](#top) [bad](#bottom) [web](https://example.com/x)\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("docs/a.md"),
        "```\n# not a heading\n```\n## A heading (v2)\n[up](../README.md#not-a-heading)\n",
    )
    .unwrap();
    let broken = broken_links(dir.path());
    assert_eq!(broken.len(), 3, "{broken:#?}");
    assert!(broken[0].contains("(docs/missing.md) no such file"));
    assert!(broken[1].contains("(#bottom) no heading #bottom"));
    assert!(broken[2].starts_with("docs/a.md: (../README.md#not-a-heading)"));
}

/// Every `sh` example of the README and `docs/` runs as written against a served instance,
/// offline (see [`commands`]); the few that cannot say why above their fence.
#[test]
fn every_sh_example_in_the_readme_and_docs_runs_as_written() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let examples = commands::examples(root, &markdown_files(root));
    let unexplained: Vec<&str> = examples
        .iter()
        .filter(|example| example.not_run.as_deref() == Some(""))
        .map(|example| example.place.as_str())
        .collect();
    assert!(
        unexplained.is_empty(),
        "`not run` without a reason: {unexplained:?}"
    );
    let askgate = Path::new(env!("CARGO_BIN_EXE_askgate"))
        .parent()
        .unwrap()
        .to_path_buf();
    let claude = crate::support::claude_code::binary();
    let path = format!(
        "{}:{}:{}",
        askgate.display(),
        claude.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let to_run: Vec<&commands::Example> = examples
        .iter()
        .filter(|example| example.not_run.is_none())
        .collect();
    assert!(to_run.len() >= 10, "{examples:#?}");
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| loop {
                let index = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(example) = to_run.get(index) else {
                    break;
                };
                let ran = commands::run(root, example, &path);
                if !ran.ok {
                    failures.lock().unwrap().push(format!(
                        "{}:\n{}\n{}",
                        example.place, example.text, ran.output
                    ));
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
