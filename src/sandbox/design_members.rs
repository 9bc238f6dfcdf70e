//! sandbox::design_members: the member and sharing operations (`add_member`,
//! `update_member_role`, `remove_member`, `update_sharing`). Permission checks are `enforce`'s.

use serde_json::json;

use super::arguments::Arguments;
use super::design::{json_block, summary, Operation};
use super::design_writes::{project_mut, short_id};
use super::state::{DesignState, Member};

const ROLES: [&str; 3] = ["viewer", "commenter", "editor"];

/// Roles are matched case-insensitively after trimming.
fn role(arguments: &Arguments<'_>) -> Result<String, String> {
    let raw = arguments.required_str("role")?;
    let role = raw.trim().to_lowercase();
    if ROLES.contains(&role.as_str()) {
        Ok(role)
    } else {
        Err(format!(
            "`role` must be viewer, commenter or editor, got `{raw}`"
        ))
    }
}

pub fn change_member(
    state: &mut DesignState,
    tool: &str,
    arguments: Arguments<'_>,
) -> Operation<String> {
    let project = project_mut(state, &arguments)?;
    if tool == "add_member" {
        let role = role(&arguments)?;
        let email = arguments
            .optional_str("email")?
            .unwrap_or_default()
            .to_owned();
        let account_uuid = match arguments.optional_str("account_uuid")? {
            Some(account) if !account.is_empty() => account.to_owned(),
            _ if !email.is_empty() => short_id("acct"),
            _ => return Err("`add_member` needs `account_uuid` or `email`".into()),
        };
        if project
            .members
            .iter()
            .any(|m| m.account_uuid == account_uuid)
        {
            return Err(format!("`{account_uuid}` is already a member"));
        }
        let member = Member {
            account_uuid,
            email,
            role,
        };
        project.members.push(member.clone());
        return Ok(json_block(&json!({"member": member})));
    }
    let account_uuid = arguments.required_str("account_uuid")?;
    let position = project
        .members
        .iter()
        .position(|member| member.account_uuid == account_uuid)
        .ok_or_else(|| format!("`{account_uuid}` is not a member of `{}`", project.id))?;
    if tool == "remove_member" {
        project.members.remove(position);
        return Ok(json_block(&json!({"removed": account_uuid})));
    }
    let role = role(&arguments)?;
    let member = project.members.get_mut(position).ok_or("member vanished")?;
    member.role = role;
    Ok(json_block(&json!({"member": member})))
}

pub fn update_sharing(state: &mut DesignState, arguments: Arguments<'_>) -> Operation<String> {
    let scope = arguments
        .optional_str("scope")?
        .map(|s| s.trim().to_lowercase());
    let link = arguments
        .optional_str("link_permission")?
        .map(|s| s.trim().to_lowercase());
    if let Some(scope) = scope.as_deref().filter(|s| !["invited", "org"].contains(s)) {
        return Err(format!("`scope` must be invited or org, got `{scope}`"));
    }
    if let Some(link) = link
        .as_deref()
        .filter(|l| !["view", "comment", "edit"].contains(l))
    {
        return Err(format!(
            "`link_permission` must be view, comment or edit, got `{link}`"
        ));
    }
    let project = project_mut(state, &arguments)?;
    if let Some(scope) = scope {
        project.scope = scope;
    }
    if let Some(link) = link {
        project.link_permission = link;
    }
    Ok(json_block(&summary(project)))
}
