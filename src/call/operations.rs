//! Owns the static Design operation table (§1.3, §1.4) and the hint merge with a server catalog
//! (§1.2); it must not validate arguments or decide permissions.

use serde::{Deserialize, Serialize};

use super::catalog::Catalog;
use super::schema::{
    body_field, choice, field, object_list, scalar, string_list, ArgumentKey, ArgumentKind,
    ArgumentSchema, ChoiceMatching, ElementField, PLAN_TOKEN_MAX_BYTES,
};

/// One row of the static table: an operation the client knows without asking the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StaticOperation {
    pub name: &'static str,
    pub read_only: bool,
    pub destructive: bool,
    pub schema: ArgumentSchema,
}

/// Where an operation's hints came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Provenance {
    /// In the static table (the server can only tighten it).
    Static,
    /// Only in the discovered server catalog.
    ServerOnly,
    /// In neither: treated as a destructive write.
    Unknown,
}

/// The effective safety hints of one operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct OperationHints {
    pub read_only: bool,
    pub destructive: bool,
    pub provenance: Provenance,
}

const PLAN_TOKEN: ArgumentKey = ArgumentKey {
    name: "plan_token",
    kind: ArgumentKind::Scalar {
        max_bytes: PLAN_TOKEN_MAX_BYTES,
    },
};

const ROLES: &[&str] = &["viewer", "commenter", "editor"];
const ROLE: ArgumentKey = choice("role", ROLES, ChoiceMatching::TrimmedCaseInsensitive);

const MESSAGE_FIELDS: &[ElementField] = &[field("role", true), body_field("content", true)];
const WRITE_FILE_FIELDS: &[ElementField] = &[
    field("path", true),
    body_field("data", false),
    field("local_path", false),
    field("encoding", false),
    field("if_match", false),
];
const DELETE_FILE_FIELDS: &[ElementField] = &[field("path", true), field("if_match", false)];
const COPY_FILE_FIELDS: &[ElementField] = &[
    field("src", true),
    field("dest", true),
    field("src_project_id", false),
    field("if_match", false),
];

const fn read(name: &'static str, keys: &'static [ArgumentKey]) -> StaticOperation {
    StaticOperation {
        name,
        read_only: true,
        destructive: false,
        schema: ArgumentSchema { keys },
    }
}

const fn write(
    name: &'static str,
    destructive: bool,
    keys: &'static [ArgumentKey],
) -> StaticOperation {
    StaticOperation {
        name,
        read_only: false,
        destructive,
        schema: ArgumentSchema { keys },
    }
}

/// The §1.3 table with the §1.4 key lists, in the order the facts list them.
static STATIC_OPERATIONS: &[StaticOperation] = &[
    read("list", &[scalar("full")]),
    read("list_design_systems", &[]),
    read(
        "get_claude_design_prompt",
        &[scalar("design_system_id"), scalar("project_id")],
    ),
    read("list_projects", &[]),
    read("get_project", &[scalar("project_id")]),
    read("list_files", &[scalar("project_id"), scalar("path")]),
    read("read_file", &[scalar("project_id"), scalar("path")]),
    read(
        "get_conversation",
        &[scalar("project_id"), scalar("chat_id")],
    ),
    read("list_members", &[scalar("project_id")]),
    write(
        "render_preview",
        false,
        &[
            scalar("project_id"),
            scalar("path"),
            scalar("render"),
            string_list("validators"),
        ],
    ),
    write(
        "create_project",
        false,
        &[scalar("name"), scalar("design_system_id")],
    ),
    write(
        "put_conversation",
        false,
        &[
            scalar("project_id"),
            scalar("title"),
            object_list("messages", MESSAGE_FIELDS),
        ],
    ),
    write(
        "finalize_plan",
        false,
        &[
            scalar("project_id"),
            string_list("writes"),
            string_list("deletes"),
            choice("scope", &["paths", "project"], ChoiceMatching::Exact),
        ],
    ),
    write(
        "write_files",
        false,
        &[
            scalar("project_id"),
            PLAN_TOKEN,
            object_list("files", WRITE_FILE_FIELDS),
        ],
    ),
    write(
        "copy_files",
        false,
        &[
            scalar("project_id"),
            PLAN_TOKEN,
            object_list("files", COPY_FILE_FIELDS),
        ],
    ),
    write(
        "create_support_js",
        false,
        &[
            scalar("project_id"),
            PLAN_TOKEN,
            scalar("path"),
            scalar("if_match"),
        ],
    ),
    write(
        "add_member",
        false,
        &[
            scalar("project_id"),
            scalar("account_uuid"),
            scalar("email"),
            ROLE,
        ],
    ),
    write(
        "delete_files",
        true,
        &[
            scalar("project_id"),
            PLAN_TOKEN,
            string_list("paths"),
            object_list("files", DELETE_FILE_FIELDS),
        ],
    ),
    write(
        "remove_member",
        true,
        &[scalar("project_id"), scalar("account_uuid")],
    ),
    write(
        "update_member_role",
        true,
        &[scalar("project_id"), scalar("account_uuid"), ROLE],
    ),
    write(
        "update_sharing",
        true,
        &[
            scalar("project_id"),
            choice(
                "scope",
                &["invited", "org"],
                ChoiceMatching::CaseInsensitive,
            ),
            choice(
                "link_permission",
                &["view", "comment", "edit"],
                ChoiceMatching::CaseInsensitive,
            ),
        ],
    ),
];

/// The local pseudo-operation that runs `tools/list` discovery (`dCe`).
pub const LOCAL_LIST: &str = "list";

/// The static table row for `name`, including the local pseudo-operation `list`.
pub fn static_operation(name: &str) -> Option<&'static StaticOperation> {
    STATIC_OPERATIONS
        .iter()
        .find(|operation| operation.name == name)
}

/// Every static operation, in table order.
pub fn static_operations() -> &'static [StaticOperation] {
    STATIC_OPERATIONS
}

/// Merges the static table with the server catalog (§1.2).
///
/// A static operation can only be tightened by the server (readOnly AND, destructive OR), so a
/// compromised or buggy catalog cannot make a write look read-only. A server-only operation takes
/// the server hints with fail-closed defaults (readOnly false, destructive true); an operation
/// known to neither is a destructive write.
///
/// `list` is the local pseudo-operation (§1.1, §1.2): it is never sent as a `tools/call`, so a
/// server catalog entry that happens to be named `list` says nothing about it — it stays
/// read-only and never destructive whatever that entry's hints are.
///
/// Only a JSON boolean is a hint: the catalog keeps `readOnlyHint: "true"` or `1` as no hint
/// (`catalog.rs`), so such a value never makes an operation read-only.
pub fn effective_hints(operation: &str, catalog: Option<&Catalog>) -> OperationHints {
    let catalog = catalog.filter(|_| operation != LOCAL_LIST);
    let server = catalog.and_then(|catalog| catalog.tool(operation));
    let server_read_only = server.and_then(|tool| tool.read_only_hint);
    let server_destructive = server.and_then(|tool| tool.destructive_hint);
    match (static_operation(operation), server) {
        (Some(known), _) => OperationHints {
            read_only: known.read_only && server_read_only.unwrap_or(true),
            destructive: known.destructive || server_destructive.unwrap_or(false),
            provenance: Provenance::Static,
        },
        (None, Some(_)) => OperationHints {
            read_only: server_read_only.unwrap_or(false),
            destructive: server_destructive.unwrap_or(true),
            provenance: Provenance::ServerOnly,
        },
        (None, None) => OperationHints {
            read_only: false,
            destructive: true,
            provenance: Provenance::Unknown,
        },
    }
}
