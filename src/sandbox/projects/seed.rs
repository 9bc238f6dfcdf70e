//! Owns the seed state of the Projects sandbox (the common contract's "Handbook" project); it
//! must not hold behaviour beyond building that state.

use serde_json::json;

use super::store::{Doc, ProjectStore, Upload};

pub const ORG_UUID: &str = "org-0000";
pub const PROJECT_UUID: &str = "11111111-1111-4111-8111-111111111111";
pub const NOTES_DOC_UUID: &str = "22222222-2222-4222-8222-222222222201";
pub const BIG_DOC_UUID: &str = "22222222-2222-4222-8222-222222222202";
pub const SPEC_FILE_UUID: &str = "33333333-3333-4333-8333-333333333301";
pub const LOGO_FILE_UUID: &str = "33333333-3333-4333-8333-333333333302";

/// `big.md` is 300 KiB, above the client's 256 KiB inline limit.
pub const BIG_DOC_BYTES: usize = 300 * 1024;
/// `logo.png` is 2 KiB of raw bytes.
pub const LOGO_BYTES: usize = 2 * 1024;

const NOTES: &str = "# Notes\n\nThe launch checklist lives in this handbook.\n\
Ask the design team before changing the logo.\n";
const SPEC_TEXT: &str = "Gateway specification: every call is decided before it is executed.";
const PNG_SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a];

/// The seed project of the common contract.
pub(crate) fn seed_store() -> ProjectStore {
    ProjectStore {
        org_uuid: ORG_UUID.to_owned(),
        project_uuid: PROJECT_UUID.to_owned(),
        name: "Handbook".to_owned(),
        description: "The team handbook".to_owned(),
        prompt_template: "Answer from the handbook and cite the doc.".to_owned(),
        sync_sources: json!([{"type": "github", "config": {"repository": "example/handbook"}}]),
        docs: vec![
            doc(NOTES_DOC_UUID, "notes.md", NOTES.to_owned()),
            doc(BIG_DOC_UUID, "big.md", big_text()),
        ],
        uploads: vec![
            Upload {
                file_uuid: SPEC_FILE_UUID.to_owned(),
                file_name: "spec.pdf".to_owned(),
                file_kind: "document".to_owned(),
                created_at: "2026-01-06T09:00:00Z".to_owned(),
                extracted: Some(SPEC_TEXT.to_owned()),
                raw: b"%PDF-1.4\n% sandbox spec\n%%EOF\n".to_vec(),
            },
            Upload {
                file_uuid: LOGO_FILE_UUID.to_owned(),
                file_name: "logo.png".to_owned(),
                file_kind: "image".to_owned(),
                created_at: "2026-01-06T09:30:00Z".to_owned(),
                extracted: None,
                raw: logo_bytes(),
            },
        ],
        knowledge_size: 1000,
        max_knowledge_size: 500_000,
    }
}

fn doc(uuid: &str, file_name: &str, content: String) -> Doc {
    Doc {
        uuid: uuid.to_owned(),
        file_name: file_name.to_owned(),
        content,
        created_at: "2026-01-05T10:00:00Z".to_owned(),
    }
}

/// Numbered ASCII lines cut to exactly [`BIG_DOC_BYTES`].
fn big_text() -> String {
    let mut text = String::with_capacity(BIG_DOC_BYTES + 64);
    let mut line = 0_u32;
    while text.len() < BIG_DOC_BYTES {
        line = line.saturating_add(1);
        text.push_str(&format!("Line {line} of the big handbook doc.\n"));
    }
    text.truncate(BIG_DOC_BYTES);
    text
}

/// A PNG signature followed by a byte pattern, [`LOGO_BYTES`] long.
fn logo_bytes() -> Vec<u8> {
    let filler = (0..=u8::MAX).cycle().take(LOGO_BYTES - PNG_SIGNATURE.len());
    PNG_SIGNATURE.into_iter().chain(filler).collect()
}
