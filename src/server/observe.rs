//! server::observe: before a decision, asks the upstream what the facts need — the consent
//! bit when unknown, the catalog for an operation outside the static table, the server's
//! grants and the project's identity for a tokenless write, the attached Project's detail.
//! It fetches; it decides nothing.

use crate::call::{static_operation, Catalog, DesignCall, ProjectsCall, ProjectsMethod};
use crate::executor::design::GrantProbe;
use crate::facts::observations::{ProjectDoc, ProjectFile};
use crate::facts::{DesignObservations, ProjectsObservations, ServerGrants};
use crate::state::{ConsentState, PlanStore};

use super::account::Account;

/// Discovers the catalog first when the operation is outside the static table: validation
/// of such an operation depends on it (client-facts §1.2, §1.4).
pub async fn catalog_for(account: &Account, input: &serde_json::Value) -> Option<Catalog> {
    let operation = input
        .get("operation")
        .and_then(|value| value.as_str())
        .unwrap_or("");
    if static_operation(operation).is_some() {
        return account.catalog();
    }
    if account.catalog().is_none() {
        if let Ok(tools) = account.design.discover().await {
            account.catalog_discovered(Catalog::parse(&tools));
        }
    }
    account.catalog()
}

pub async fn consent(account: &Account) {
    if account.consent.state() != ConsentState::Unknown {
        return;
    }
    let _guard = account.consent_fetch.lock().await;
    if account.consent.state() != ConsentState::Unknown {
        return;
    }
    let ticket = account.consent.fetch_started();
    let value = account.design.consent().await;
    account.consent.fetch_finished(ticket, value);
}

pub async fn design(
    account: &Account,
    call: &DesignCall,
    _plans: &PlanStore,
    catalog: Option<Catalog>,
) -> DesignObservations {
    consent(account).await;
    let mut observed = DesignObservations {
        catalog,
        ..DesignObservations::default()
    };
    let tokenless_write = matches!(call.operation.as_str(), "write_files" | "create_support_js")
        && call.is_tokenless();
    let Some(project_id) = call.project_id().filter(|id| !id.is_empty()) else {
        return observed;
    };
    if !tokenless_write || account.grants.is_verified(project_id) {
        return observed;
    }
    observed.server_grants = match account.design.grants().await {
        GrantProbe::Available(projects) => ServerGrants {
            available: true,
            projects,
        },
        GrantProbe::Unavailable(_) => ServerGrants {
            available: false,
            projects: Default::default(),
        },
    };
    let granted = observed.server_grants.projects.contains(project_id);
    if !granted || account.grants.needs_recard(project_id) {
        if let Some(identity) = account.design.project_identity(project_id).await {
            observed
                .project_identity
                .insert(project_id.to_string(), identity);
        }
    }
    observed
}

/// The attached Project's detail, for the budget and upload rules; `None` when unavailable.
pub async fn projects(
    account: &Account,
    call: &ProjectsCall,
    scopes: &[String],
) -> Option<ProjectsObservations> {
    let executor = account.projects.as_ref()?;
    if !matches!(
        call.method,
        ProjectsMethod::ProjectWrite | ProjectsMethod::ProjectDelete
    ) {
        return Some(ProjectsObservations {
            scopes: scopes.to_vec(),
            ..ProjectsObservations::default()
        });
    }
    let info = ProjectsCall {
        method: ProjectsMethod::ProjectInfo,
        path: None,
        source: None,
        present_to_user: false,
        query: None,
        n: 5,
    };
    let detail = executor.execute(&info).await.ok()?;
    let list = |key: &str| {
        detail
            .get(key)
            .and_then(|value| value.as_array())
            .cloned()
            .unwrap_or_default()
    };
    let text = |item: &serde_json::Value, key: &str| {
        item.get(key)
            .and_then(|value| value.as_str())
            .map(str::to_string)
    };
    let knowledge = detail.get("knowledge");
    Some(ProjectsObservations {
        scopes: scopes.to_vec(),
        knowledge_size: knowledge
            .and_then(|k| k.get("knowledge_size"))
            .and_then(|v| v.as_i64()),
        max_knowledge_size: knowledge
            .and_then(|k| k.get("max_knowledge_size"))
            .and_then(|v| v.as_i64()),
        docs: list("docs")
            .iter()
            .filter_map(|doc| {
                Some(ProjectDoc {
                    path: text(doc, "path")?,
                })
            })
            .collect(),
        files: list("files")
            .iter()
            .filter_map(|file| {
                Some(ProjectFile {
                    path: text(file, "path")?,
                    file_kind: text(file, "file_kind"),
                })
            })
            .collect(),
    })
}
