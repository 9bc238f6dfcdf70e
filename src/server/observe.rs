//! server::observe: what the facts need from outside the process — the consent bit when
//! unknown, the catalog for an operation outside the static table, the server's grants and the
//! project's identity for a tokenless write, the attached Project's detail, and where a
//! `local_path` lies with its stat. Except for the `local_path` (a look at askgate's own file
//! system, which the gates read), the gateway calls it only after a first decision on local
//! facts found no gate denying the call. It fetches; it decides nothing.

use std::sync::Arc;

use crate::call::{
    static_operation, Catalog, DesignCall, ProjectsCall, ProjectsMethod, WriteSource,
};
use crate::executor::design::GrantProbe;
use crate::executor::projects::{observe_local_path, ProjectsExecutor};
use crate::facts::observations::{LocalFileStat, LocalPathPlace, ProjectDoc, ProjectFile};
use crate::facts::{DesignObservations, ProjectsObservations, ServerGrants};
use crate::state::{AccountEvent, ConsentState};

use super::account::Account;

/// Discovers the catalog first when the operation is outside the static table: validation
/// of such an operation depends on it (client-facts §1.2, §1.4).
pub async fn catalog_for(account: &Account, input: &serde_json::Value) -> Option<Arc<Catalog>> {
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

/// Fetches the consent bit when it is unknown; the answer is recorded as an event, so that a
/// fleet's replicas share it (a store that cannot take it leaves the bit unknown).
pub async fn consent(account: &Account) {
    if account.state().consent.state() != ConsentState::Unknown {
        return;
    }
    let _guard = account.consent_fetch.lock().await;
    if account.state().consent.state() != ConsentState::Unknown {
        return;
    }
    let ticket = account.state().consent.fetch_started();
    let Some(granted) = account.design.consent().await else {
        return;
    };
    let event = AccountEvent::ConsentFetched {
        generation: ticket.generation(),
        granted,
    };
    if let Err(error) = account.record([event]).await {
        tracing::warn!(%error, "the consent bit was not recorded");
    }
}

pub async fn design(
    account: &Account,
    call: &DesignCall,
    catalog: Option<Arc<Catalog>>,
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
    if !tokenless_write || account.state().grants.is_verified(project_id) {
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
    if !granted || account.state().grants.needs_recard(project_id) {
        if let Some(identity) = account.design.project_identity(project_id).await {
            observed
                .project_identity
                .insert(project_id.to_string(), identity);
        }
    }
    observed
}

/// What is known of the attached Project before anything is asked upstream: the credential's
/// scopes (configuration) and where a `local_path` lies, with the detail marked unavailable.
/// The first, local decision reads it; [`projects`] completes it.
pub async fn projects_local(
    account: &Account,
    call: &ProjectsCall,
) -> Option<ProjectsObservations> {
    let executor = account.projects.as_ref()?;
    let mut observed = ProjectsObservations {
        scopes: account.scopes.clone(),
        detail_unavailable: true,
        ..ProjectsObservations::default()
    };
    (observed.local_path_place, observed.local_file) = local_path(executor, call).await;
    Some(observed)
}

/// `local` (from [`projects_local`]) completed with the attached Project's detail for a write
/// or delete (the budget, target and upload rules); the detail is marked unavailable when the
/// lookup fails.
pub async fn projects(
    account: &Account,
    call: &ProjectsCall,
    local: Option<ProjectsObservations>,
) -> Option<ProjectsObservations> {
    let executor = account.projects.as_ref()?;
    let mut observed = ProjectsObservations {
        detail_unavailable: false,
        ..local?
    };
    if !matches!(
        call.method,
        ProjectsMethod::ProjectWrite | ProjectsMethod::ProjectDelete
    ) {
        return Some(observed);
    }
    let info = ProjectsCall {
        method: ProjectsMethod::ProjectInfo,
        path: None,
        source: None,
        present_to_user: false,
        query: None,
        n: 5,
    };
    match executor.execute(&info).await {
        Ok(detail) => detail_read(&mut observed, &detail),
        Err(error) => {
            tracing::info!(%error, "project detail unavailable for the decision");
            observed.detail_unavailable = true;
        }
    }
    Some(observed)
}

/// The `local_path` as the decision sees it (where it lies; device, inode and size), off the
/// async threads; `unknown` when the look failed.
async fn local_path(
    executor: &ProjectsExecutor,
    call: &ProjectsCall,
) -> (LocalPathPlace, Option<LocalFileStat>) {
    let Some(WriteSource::LocalPath(given)) = &call.source else {
        return (LocalPathPlace::Unknown, None);
    };
    let (rules, given) = (executor.local_path_rules().clone(), given.clone());
    tokio::task::spawn_blocking(move || observe_local_path(&rules, &given))
        .await
        .unwrap_or((LocalPathPlace::Unknown, None))
}

fn detail_read(observed: &mut ProjectsObservations, detail: &serde_json::Value) {
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
    observed.knowledge_size = knowledge
        .and_then(|k| k.get("knowledge_size"))
        .and_then(|v| v.as_i64());
    observed.max_knowledge_size = knowledge
        .and_then(|k| k.get("max_knowledge_size"))
        .and_then(|v| v.as_i64());
    observed.docs = list("docs")
        .iter()
        .filter_map(|doc| {
            Some(ProjectDoc {
                path: text(doc, "path")?,
            })
        })
        .collect();
    observed.files = list("files")
        .iter()
        .filter_map(|file| {
            Some(ProjectFile {
                path: text(file, "path")?,
                file_kind: text(file, "file_kind"),
            })
        })
        .collect();
}
