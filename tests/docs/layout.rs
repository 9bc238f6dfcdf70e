//! The README's module map against the code (issue 39 §3): every module `src/lib.rs` declares
//! has its line in the README's *Layout* block, and every `src/…` path the block names exists.

use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The first word of each line of the README's *Layout* code block that starts with `src/`.
fn layout_paths(readme: &str) -> Vec<String> {
    let layout = readme
        .split("## Layout")
        .nth(1)
        .expect("the README has a Layout section");
    let block = layout
        .split("```")
        .nth(1)
        .expect("the Layout section has a code block");
    block
        .lines()
        .filter(|line| line.starts_with("src/"))
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

/// The modules `src/lib.rs` declares (`pub mod name;`).
fn library_modules(lib: &str) -> Vec<String> {
    lib.lines()
        .filter_map(|line| line.trim().strip_prefix("pub mod "))
        .filter_map(|rest| rest.strip_suffix(';'))
        .map(str::to_string)
        .collect()
}

#[test]
fn the_readme_layout_names_every_module_of_lib_rs_and_nothing_that_is_gone() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lib = std::fs::read_to_string(root().join("src/lib.rs")).unwrap();
    let listed = layout_paths(&readme);
    let modules = library_modules(&lib);
    assert!(modules.len() >= 10, "{modules:?}");
    let missing: Vec<&String> = modules
        .iter()
        .filter(|module| {
            let (dir, file) = (format!("src/{module}/"), format!("src/{module}.rs"));
            !listed.iter().any(|path| *path == dir || *path == file)
        })
        .collect();
    assert!(
        missing.is_empty(),
        "modules of src/lib.rs without a line in the README's Layout: {missing:?}"
    );
    let gone: Vec<&String> = listed
        .iter()
        .filter(|path| !root().join(path.trim_end_matches('/')).exists())
        .collect();
    assert!(
        gone.is_empty(),
        "the README's Layout names paths that do not exist: {gone:?}"
    );
}

#[test]
fn the_layout_check_sees_a_missing_module_and_a_path_that_is_gone() {
    let readme = "## Layout\n\n```\nsrc/call/  x\nsrc/gone.rs  y\n```\n";
    let listed = layout_paths(readme);
    assert_eq!(listed, ["src/call/", "src/gone.rs"]);
    assert_eq!(
        library_modules("pub mod call;\npub mod paths;\n"),
        ["call", "paths"]
    );
    assert!(!root().join("src/gone.rs").exists());
}
