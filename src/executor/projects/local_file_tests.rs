//! Tests of the `local_path` checks against a real temporary directory.
use std::os::unix::fs::symlink;
use std::path::Path;

use super::super::local_place::observe_local_path;
use super::*;
use crate::facts::observations::LocalPathPlace;

/// The root `working`, with no service paths.
fn rules(working: &Path) -> LocalPathRules {
    LocalPathRules {
        root: Some(working.to_path_buf()),
        service_paths: Vec::new(),
    }
}

/// The real flow: what the decision sees, then the read of that file.
fn read(working: &Path, given: &str) -> Result<LocalText, ProjectsError> {
    let rules = rules(working);
    let (_, decided) = observe_local_path(&rules, given);
    read_local_file(&rules, given, decided)
}

fn message(error: ProjectsError) -> (String, Option<&'static str>) {
    match error {
        ProjectsError::LocalFile { message, code } => (message, code),
        other => panic!("unexpected error {other:?}"),
    }
}

fn workspace() -> (tempfile::TempDir, PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let working = root.path().join("work");
    std::fs::create_dir(&working).unwrap();
    (root, working)
}

#[test]
fn reads_a_file_under_the_root_and_reports_it_relative_to_the_root() {
    let (_root, working) = workspace();
    std::fs::create_dir(working.join("docs")).unwrap();
    std::fs::write(working.join("docs/a.md"), "héllo").unwrap();
    let text = read(&working, "./docs/../docs/a.md").unwrap();
    assert_eq!(text.content, "héllo");
    assert_eq!(
        text.relative,
        Path::new("docs/a.md"),
        "relative to the root"
    );
}

#[test]
fn refuses_paths_outside_lexically() {
    let (root, working) = workspace();
    std::fs::write(root.path().join("secret"), "x").unwrap();
    let (text, _) = message(read(&working, "../secret").unwrap_err());
    assert_eq!(
        text,
        "local_path `../secret` must be inside `projects.local_path_root`"
    );
    let absolute = root.path().join("secret");
    let (text, _) = message(read(&working, absolute.to_str().unwrap()).unwrap_err());
    assert!(text.ends_with("must be inside `projects.local_path_root`"));
}

#[test]
fn refuses_a_directory_symlink_that_leads_outside() {
    let (root, working) = workspace();
    std::fs::create_dir(root.path().join("outside")).unwrap();
    std::fs::write(root.path().join("outside/secret"), "x").unwrap();
    symlink(root.path().join("outside"), working.join("link")).unwrap();
    let (text, _) = message(read(&working, "link/secret").unwrap_err());
    assert!(
        text.ends_with("resolves outside `projects.local_path_root`"),
        "{text}"
    );
}

#[test]
fn refuses_a_final_symlink_even_inside() {
    let (_root, working) = workspace();
    std::fs::write(working.join("real.md"), "x").unwrap();
    symlink(working.join("real.md"), working.join("alias.md")).unwrap();
    let (text, code) = message(read(&working, "alias.md").unwrap_err());
    assert_eq!(code, Some("ELOOP"));
    assert!(text.ends_with("was replaced during the upload"));
}

#[test]
fn refuses_a_path_swapped_for_a_symlink_between_check_and_open() {
    let (root, working) = workspace();
    std::fs::write(working.join("a.md"), "checked").unwrap();
    std::fs::write(root.path().join("secret"), "stolen").unwrap();
    let location = check_location(&rules(&working), "a.md").unwrap();
    std::fs::remove_file(working.join("a.md")).unwrap();
    symlink(root.path().join("secret"), working.join("a.md")).unwrap();
    let (text, code) = message(open_checked(&location).unwrap_err());
    assert_eq!(code, Some("ELOOP"));
    assert!(text.ends_with("was replaced during the upload"));
}

#[test]
fn refuses_a_file_replaced_between_open_and_verification() {
    let (_root, working) = workspace();
    std::fs::write(working.join("a.md"), "first").unwrap();
    let location = check_location(&rules(&working), "a.md").unwrap();
    let file = open_checked(&location).unwrap();
    std::fs::write(working.join("b.md"), "second").unwrap();
    std::fs::rename(working.join("b.md"), working.join("a.md")).unwrap();
    let (text, _) = message(verify_open(&location, &file).unwrap_err());
    assert!(text.ends_with("was replaced during the upload"));
}

#[test]
fn reads_from_the_checked_descriptor_not_the_path() {
    let (_root, working) = workspace();
    std::fs::write(working.join("a.md"), "original").unwrap();
    let location = check_location(&rules(&working), "a.md").unwrap();
    let file = open_checked(&location).unwrap();
    verify_open(&location, &file).unwrap();
    // A swap after verification changes the path but not the open descriptor.
    std::fs::remove_file(working.join("a.md")).unwrap();
    std::fs::write(working.join("a.md"), "swapped").unwrap();
    assert_eq!(read_open(&location, file).unwrap(), "original");
}

#[test]
fn missing_and_directory_and_fifo_targets() {
    let (_root, working) = workspace();
    let (text, code) = message(read(&working, "nope.md").unwrap_err());
    assert_eq!(text, "no file exists at local_path `nope.md`");
    assert_eq!(code, Some("ENOENT"));
    std::fs::create_dir(working.join("dir")).unwrap();
    let (text, _) = message(read(&working, "dir").unwrap_err());
    assert!(text.ends_with("must be a regular file"));
    let status = std::process::Command::new("mkfifo")
        .arg(working.join("pipe"))
        .status()
        .unwrap();
    assert!(status.success());
    let (text, _) = message(read(&working, "pipe").unwrap_err());
    assert!(text.ends_with("must be a regular file"), "{text}");
}

#[test]
fn size_limit_is_inclusive() {
    let (_root, working) = workspace();
    let at_limit = std::fs::File::create(working.join("at.txt")).unwrap();
    at_limit.set_len(LOCAL_FILE_MAX_BYTES).unwrap();
    let text = read(&working, "at.txt").unwrap();
    assert_eq!(text.content.len() as u64, LOCAL_FILE_MAX_BYTES);
    let over = std::fs::File::create(working.join("over.txt")).unwrap();
    over.set_len(LOCAL_FILE_MAX_BYTES + 1).unwrap();
    let (text, _) = message(read(&working, "over.txt").unwrap_err());
    assert_eq!(
        text,
        "local_path `over.txt` is 26214401 bytes, above the 26214400-byte limit"
    );
}

#[test]
fn refuses_invalid_utf8() {
    let (_root, working) = workspace();
    std::fs::write(working.join("bin"), [0xff, 0xfe, 0x00]).unwrap();
    let (text, _) = message(read(&working, "bin").unwrap_err());
    assert!(text.ends_with("is not valid UTF-8 text"));
}

#[test]
fn errno_names_cover_the_reference_mapping() {
    let error = std::io::Error::from_raw_os_error(40);
    assert_eq!(error_code(&error), Some("ELOOP"));
    assert_eq!(error_code(&std::io::Error::from_raw_os_error(9999)), None);
    assert_eq!(error_code(&std::io::Error::other("x")), None);
}

#[test]
fn the_test_seam_swaps_between_the_steps_of_one_read() {
    let (root, working) = workspace();
    std::fs::write(working.join("a.md"), "checked").unwrap();
    std::fs::write(root.path().join("secret"), "stolen").unwrap();
    let (target, secret) = (working.join("a.md"), root.path().join("secret"));
    let swap = move || {
        std::fs::remove_file(&target).unwrap();
        symlink(&secret, &target).unwrap();
    };
    test_seam::arm_for_tests(LocalPathStage::Checked, working.join("a.md"), swap.clone());
    let (text, code) = message(read(&working, "a.md").unwrap_err());
    assert_eq!(code, Some("ELOOP"));
    assert_eq!(text, "local_path `a.md` was replaced during the upload");

    std::fs::remove_file(working.join("a.md")).unwrap();
    std::fs::write(working.join("a.md"), "checked").unwrap();
    test_seam::arm_for_tests(LocalPathStage::Verified, working.join("a.md"), swap);
    let text = read(&working, "a.md").unwrap();
    assert_eq!(text.content, "checked", "read from the verified descriptor");
}

#[test]
fn without_a_root_nothing_is_read() {
    let (_root, working) = workspace();
    std::fs::write(working.join("a.md"), "x").unwrap();
    let unset = LocalPathRules::default();
    assert_eq!(
        observe_local_path(&unset, "a.md"),
        (LocalPathPlace::RootUnset, None)
    );
    let (text, _) = message(read_local_file(&unset, "a.md", None).unwrap_err());
    assert_eq!(
        text,
        "local_path `a.md` is not read: askgate reads a local_path only under \
         `projects.local_path_root`, which is not set"
    );
}

#[test]
fn the_decision_sees_where_the_path_lies() {
    let (root, working) = workspace();
    std::fs::write(working.join("a.md"), "abc").unwrap();
    std::fs::create_dir(working.join("dir")).unwrap();
    std::fs::write(root.path().join("secret"), "x").unwrap();
    symlink(root.path().join("secret"), working.join("out.md")).unwrap();
    let rules = rules(&working);
    let place = |given: &str| observe_local_path(&rules, given).0;
    assert_eq!(place("../secret"), LocalPathPlace::OutsideRoot);
    assert_eq!(place("out.md"), LocalPathPlace::OutsideRoot, "by realpath");
    assert_eq!(place("missing.md"), LocalPathPlace::Unresolved);
    assert_eq!(place("dir"), LocalPathPlace::UnderRoot);
    let (place, stat) = observe_local_path(&rules, "a.md");
    assert_eq!(place, LocalPathPlace::UnderRoot);
    assert_eq!(stat.map(|stat| stat.bytes), Some(3));
    assert_eq!(
        observe_local_path(&rules, "dir").1,
        None,
        "not a regular file"
    );
}

#[test]
fn a_service_file_under_the_root_is_refused_by_the_reader_too() {
    let (_root, working) = workspace();
    std::fs::write(working.join("askgate.json"), "{\"callers\": []}").unwrap();
    std::fs::hard_link(working.join("askgate.json"), working.join("copy.md")).unwrap();
    let service = LocalPathRules {
        root: Some(working.clone()),
        service_paths: vec![working.join("askgate.json")],
    };
    for given in ["askgate.json", "copy.md"] {
        assert_eq!(
            observe_local_path(&service, given).0,
            LocalPathPlace::ServiceFile
        );
        // Even with the stat a decision would have seen, the reader refuses it.
        let seen = observe_local_path(&rules(&working), given).1;
        let (text, _) = message(read_local_file(&service, given, seen).unwrap_err());
        assert_eq!(
            text,
            format!("local_path `{given}` is one of askgate's own files, which are never read")
        );
    }
}

#[test]
fn a_file_the_decision_did_not_see_is_not_read() {
    let (_root, working) = workspace();
    std::fs::write(working.join("a.md"), "late").unwrap();
    let (text, _) = message(read_local_file(&rules(&working), "a.md", None).unwrap_err());
    assert_eq!(text, "local_path `a.md` changed after the call was decided");
}

#[test]
fn no_refusal_names_an_absolute_path_of_the_service() {
    let (root, working) = workspace();
    std::fs::write(root.path().join("secret"), "x").unwrap();
    symlink(root.path().join("secret"), working.join("out.md")).unwrap();
    symlink(working.join("missing"), working.join("dangling.md")).unwrap();
    std::fs::create_dir(working.join("dir")).unwrap();
    let absolute = working.display().to_string();
    for given in [
        "../secret",
        "out.md",
        "dangling.md",
        "dir",
        "nope.md",
        "dir/..",
    ] {
        let (text, _) = message(read(&working, given).unwrap_err());
        assert!(!text.contains(&absolute), "{text}");
    }
}
