//! sandbox::design_writes: the Design operations that change state (projects, conversations,
//! plans, files; members and sharing are in `design_members`). Each either changes everything it was asked to or nothing.
//! Permission checks are `enforce`'s, done before these run.

use std::collections::BTreeSet;

use serde_json::json;

use super::arguments::{normalize_path, targets, Arguments, Targets, DEFAULT_SUPPORT_PATH};
use super::design::{find_project, json_block, summary, Operation};
use super::design_members;
use super::state::{Conversation, DesignProject, DesignState, Member, PlanGrant};

/// Lifetime of a plan token, in seconds.
pub const PLAN_TOKEN_SECONDS: i64 = 600;
const SUPPORT_SCRIPT: &str = "// support.js: Claude Design runtime helpers (sandbox)\n";

/// The writing operations; `None` when `tool` is not one.
pub fn run(
    state: &mut DesignState,
    tool: &str,
    arguments: Arguments<'_>,
    now: i64,
) -> Option<Operation<String>> {
    let result = match tool {
        "create_project" => create_project(state, arguments),
        "put_conversation" => put_conversation(state, arguments),
        "finalize_plan" => finalize_plan(state, arguments, now),
        "write_files" => write_files(state, arguments),
        "copy_files" => copy_files(state, arguments),
        "create_support_js" => create_support_js(state, arguments),
        "delete_files" => delete_files(state, arguments),
        "add_member" | "update_member_role" | "remove_member" => {
            design_members::change_member(state, tool, arguments)
        }
        "update_sharing" => design_members::update_sharing(state, arguments),
        _ => return None,
    };
    Some(result)
}

pub(super) fn project_mut<'a>(
    state: &'a mut DesignState,
    arguments: &Arguments<'_>,
) -> Result<&'a mut DesignProject, String> {
    let id = arguments.required_str("project_id")?;
    state
        .projects
        .get_mut(id)
        .ok_or_else(|| format!("unknown project `{id}`"))
}

pub(super) fn short_id(prefix: &str) -> String {
    let mut id = uuid::Uuid::new_v4().simple().to_string();
    id.truncate(8);
    format!("{prefix}-{id}")
}

fn create_project(state: &mut DesignState, arguments: Arguments<'_>) -> Operation<String> {
    let name = arguments.required_str("name")?.trim().to_owned();
    let design_system_id = arguments
        .optional_str("design_system_id")?
        .map(str::to_owned);
    let id = short_id("p");
    let project = DesignProject {
        id: id.clone(),
        name,
        scope: "invited".to_owned(),
        link_permission: "view".to_owned(),
        grantable: true,
        design_system_id,
        members: vec![Member {
            account_uuid: "acct-owner-0001".to_owned(),
            email: "owner@example.com".to_owned(),
            role: "editor".to_owned(),
        }],
        files: Default::default(),
        conversations: Default::default(),
    };
    let shape = summary(&project);
    state.projects.insert(id, project);
    Ok(json_block(&shape))
}

fn put_conversation(state: &mut DesignState, arguments: Arguments<'_>) -> Operation<String> {
    let title = arguments
        .optional_str("title")?
        .unwrap_or("Untitled")
        .to_owned();
    let mut messages = Vec::new();
    for message in arguments.object_list("messages")? {
        let role = message
            .required_str("role")
            .map_err(|e| format!("in `messages`: {e}"))?;
        let content = message
            .optional_str("content")?
            .ok_or("in `messages`: missing `content`")?;
        messages.push(json!({"role": role, "content": content}));
    }
    let project = project_mut(state, &arguments)?;
    let chat_id = short_id("c");
    let count = messages.len();
    project
        .conversations
        .insert(chat_id.clone(), Conversation { title, messages });
    Ok(json_block(&json!({"chat_id": chat_id, "messages": count})))
}

fn finalize_plan(state: &mut DesignState, arguments: Arguments<'_>, now: i64) -> Operation<String> {
    match arguments.optional_str("scope")? {
        None | Some("paths") => {}
        Some("project") => return Err("scope `project` is not supported; list the paths".into()),
        Some(other) => {
            return Err(format!(
                "`scope` must be `paths` or `project`, got `{other}`"
            ))
        }
    }
    let project_id = find_project(state, &arguments)?.id.clone();
    let normalized = |field| -> Result<BTreeSet<String>, String> {
        let paths = arguments.string_list(field)?;
        Ok(paths.iter().map(|path| normalize_path(path)).collect())
    };
    let writes = normalized("writes")?;
    let deletes = normalized("deletes")?;
    if writes.is_empty() && deletes.is_empty() {
        return Err("a plan needs at least one path in `writes` or `deletes`".into());
    }
    let token = format!("pt_{}", uuid::Uuid::new_v4());
    let expires_at = now + PLAN_TOKEN_SECONDS;
    let shape = json!({"plan_token": token, "expires_at": expires_at, "writes": writes, "deletes": deletes});
    let plan = PlanGrant {
        project_id,
        writes,
        deletes,
        expires_at,
    };
    state.plans.retain(|_, plan| plan.expires_at > now);
    state.plans.insert(token, plan);
    Ok(json_block(&shape))
}

fn written(paths: &[String]) -> Operation<String> {
    Ok(json_block(&json!({"written": paths})))
}

/// `if_match` must name the current content's length-and-hash tag, or be absent.
fn check_if_match(project: &DesignProject, path: &str, item: &Arguments<'_>) -> Result<(), String> {
    let Some(expected) = item.optional_str("if_match")? else {
        return Ok(());
    };
    let current = project.files.get(path).map(|data| etag(data));
    if current.as_deref() == Some(expected) {
        Ok(())
    } else {
        Err(format!("`if_match` does not match the current `{path}`"))
    }
}

pub fn etag(data: &str) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(data.as_bytes());
    digest
        .iter()
        .take(8)
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

fn write_files(state: &mut DesignState, arguments: Arguments<'_>) -> Operation<String> {
    let Some(Ok(Targets::Writes(paths))) = targets("write_files", arguments) else {
        return Err(target_error("write_files", arguments));
    };
    let files = arguments.object_list("files")?;
    let project = project_mut(state, &arguments)?;
    let mut pending = Vec::new();
    for (path, file) in paths.iter().zip(&files) {
        let Some(data) = file.optional_str("data")? else {
            return Err(format!(
                "`{path}` needs `data` (the server cannot read `local_path`)"
            ));
        };
        check_if_match(project, path, file)?;
        pending.push((path.clone(), data.to_owned()));
    }
    if pending.is_empty() {
        return Err("`files` is empty".into());
    }
    project.files.extend(pending);
    written(&paths)
}

fn target_error(tool: &str, arguments: Arguments<'_>) -> String {
    match targets(tool, arguments) {
        Some(Err(message)) => message,
        _ => format!("cannot read the targets of `{tool}`"),
    }
}

fn copy_files(state: &mut DesignState, arguments: Arguments<'_>) -> Operation<String> {
    let Some(Ok(Targets::Writes(destinations))) = targets("copy_files", arguments) else {
        return Err(target_error("copy_files", arguments));
    };
    let own_id = arguments.required_str("project_id")?;
    let mut pending = Vec::new();
    for (destination, file) in destinations.iter().zip(arguments.object_list("files")?) {
        let source_id = file.optional_str("src_project_id")?.unwrap_or(own_id);
        let source = state
            .projects
            .get(source_id)
            .ok_or_else(|| format!("unknown project `{source_id}`"))?;
        let src = normalize_path(file.required_str("src")?);
        let data = source
            .files
            .get(&src)
            .ok_or_else(|| format!("no file `{src}` in project `{source_id}`"))?;
        pending.push((destination.clone(), data.clone(), file));
    }
    let project = project_mut(state, &arguments)?;
    for (destination, _, file) in &pending {
        check_if_match(project, destination, file)?;
    }
    project.files.extend(
        pending
            .into_iter()
            .map(|(destination, data, _)| (destination, data)),
    );
    written(&destinations)
}

fn create_support_js(state: &mut DesignState, arguments: Arguments<'_>) -> Operation<String> {
    let path = arguments
        .optional_str("path")?
        .map_or(DEFAULT_SUPPORT_PATH.to_owned(), normalize_path);
    let project = project_mut(state, &arguments)?;
    check_if_match(project, &path, &arguments)?;
    project
        .files
        .insert(path.clone(), SUPPORT_SCRIPT.to_owned());
    written(&[path])
}

fn delete_files(state: &mut DesignState, arguments: Arguments<'_>) -> Operation<String> {
    let Some(Ok(Targets::Deletes(paths))) = targets("delete_files", arguments) else {
        return Err(target_error("delete_files", arguments));
    };
    if paths.is_empty() {
        return Err("nothing to delete: give `paths` or `files`".into());
    }
    let files = arguments.object_list("files")?;
    let project = project_mut(state, &arguments)?;
    for file in &files {
        let path = normalize_path(file.required_str("path")?);
        check_if_match(project, &path, file)?;
    }
    let (deleted, missing): (Vec<String>, Vec<String>) = paths
        .into_iter()
        .partition(|path| project.files.contains_key(path));
    for path in &deleted {
        project.files.remove(path);
    }
    Ok(json_block(&json!({"deleted": deleted, "missing": missing})))
}
