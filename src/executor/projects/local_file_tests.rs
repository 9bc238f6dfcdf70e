//! Tests of the `local_path` checks against a real temporary directory.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::os::unix::fs::symlink;

use super::*;

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
fn reads_a_file_inside_the_working_directory() {
    let (_root, working) = workspace();
    std::fs::create_dir(working.join("docs")).unwrap();
    std::fs::write(working.join("docs/a.md"), "héllo").unwrap();
    let text = read_local_file(&working, "./docs/../docs/a.md", None).unwrap();
    assert_eq!(text.content, "héllo");
    assert_eq!(text.absolute, working.join("docs/a.md"));
}

#[test]
fn refuses_paths_outside_lexically() {
    let (root, working) = workspace();
    std::fs::write(root.path().join("secret"), "x").unwrap();
    let (text, _) = message(read_local_file(&working, "../secret", None).unwrap_err());
    assert_eq!(
        text,
        "local_path `../secret` must be inside the working directory"
    );
    let absolute = root.path().join("secret");
    let (text, _) =
        message(read_local_file(&working, absolute.to_str().unwrap(), None).unwrap_err());
    assert!(text.ends_with("must be inside the working directory"));
}

#[test]
fn refuses_a_directory_symlink_that_leads_outside() {
    let (root, working) = workspace();
    std::fs::create_dir(root.path().join("outside")).unwrap();
    std::fs::write(root.path().join("outside/secret"), "x").unwrap();
    symlink(root.path().join("outside"), working.join("link")).unwrap();
    let (text, _) = message(read_local_file(&working, "link/secret", None).unwrap_err());
    assert!(
        text.ends_with("resolves outside the working directory"),
        "{text}"
    );
}

#[test]
fn refuses_a_final_symlink_even_inside() {
    let (_root, working) = workspace();
    std::fs::write(working.join("real.md"), "x").unwrap();
    symlink(working.join("real.md"), working.join("alias.md")).unwrap();
    let (text, code) = message(read_local_file(&working, "alias.md", None).unwrap_err());
    assert_eq!(code, Some("ELOOP"));
    assert!(text.ends_with("was replaced during the upload"));
}

#[test]
fn refuses_a_path_swapped_for_a_symlink_between_check_and_open() {
    let (root, working) = workspace();
    std::fs::write(working.join("a.md"), "checked").unwrap();
    std::fs::write(root.path().join("secret"), "stolen").unwrap();
    let location = check_location(&working, "a.md").unwrap();
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
    let location = check_location(&working, "a.md").unwrap();
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
    let location = check_location(&working, "a.md").unwrap();
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
    let (text, code) = message(read_local_file(&working, "nope.md", None).unwrap_err());
    assert_eq!(text, "no file exists at local_path `nope.md`");
    assert_eq!(code, Some("ENOENT"));
    std::fs::create_dir(working.join("dir")).unwrap();
    let (text, _) = message(read_local_file(&working, "dir", None).unwrap_err());
    assert!(text.ends_with("must be a regular file"));
    let status = std::process::Command::new("mkfifo")
        .arg(working.join("pipe"))
        .status()
        .unwrap();
    assert!(status.success());
    let (text, _) = message(read_local_file(&working, "pipe", None).unwrap_err());
    assert!(text.ends_with("must be a regular file"), "{text}");
}

#[test]
fn size_limit_is_inclusive() {
    let (_root, working) = workspace();
    let at_limit = std::fs::File::create(working.join("at.txt")).unwrap();
    at_limit.set_len(LOCAL_FILE_MAX_BYTES).unwrap();
    let text = read_local_file(&working, "at.txt", None).unwrap();
    assert_eq!(text.content.len() as u64, LOCAL_FILE_MAX_BYTES);
    let over = std::fs::File::create(working.join("over.txt")).unwrap();
    over.set_len(LOCAL_FILE_MAX_BYTES + 1).unwrap();
    let (text, _) = message(read_local_file(&working, "over.txt", None).unwrap_err());
    assert_eq!(
        text,
        "local_path `over.txt` is 26214401 bytes, above the 26214400-byte limit"
    );
}

#[test]
fn refuses_invalid_utf8() {
    let (_root, working) = workspace();
    std::fs::write(working.join("bin"), [0xff, 0xfe, 0x00]).unwrap();
    let (text, _) = message(read_local_file(&working, "bin", None).unwrap_err());
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
    let (text, code) = message(read_local_file(&working, "a.md", None).unwrap_err());
    assert_eq!(code, Some("ELOOP"));
    assert_eq!(text, "local_path `a.md` was replaced during the upload");

    std::fs::remove_file(working.join("a.md")).unwrap();
    std::fs::write(working.join("a.md"), "checked").unwrap();
    test_seam::arm_for_tests(LocalPathStage::Verified, working.join("a.md"), swap);
    let text = read_local_file(&working, "a.md", None).unwrap();
    assert_eq!(text.content, "checked", "read from the verified descriptor");
}
