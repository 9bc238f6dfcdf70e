//! authz::load: reads policy and schema sources into a policy set with per-policy metadata —
//! parsing, the `@id` / `@reason` / `@ask` / `@quorum` / `@step_up` / `@rate_limit` annotations, strict validation against the schema,
//! the line each problem is on, and the content hash. Every problem of every file is
//! collected; it never reads files itself.

use std::collections::{BTreeSet, HashMap};
use std::str::FromStr;

use cedar_policy::{Effect, Policy, PolicyId, PolicySet, Schema, ValidationMode, Validator};
use sha2::{Digest, Sha256};

use super::cache::reads::{Reads, Tree};
use super::problem::{line_of_offset, LoadError, LoadProblem};
use super::snapshot::{PolicyMeta, Source};
use crate::authz::ApprovalKind;

pub(super) fn parse_schema(schema: &Source) -> Result<Schema, LoadError> {
    Schema::from_str(&schema.text).map_err(|error| {
        let line = first_label_offset(&error).map(|offset| line_of_offset(&schema.text, offset));
        LoadError::single(LoadProblem::in_file(&schema.name, line, render(&error)))
    })
}

pub(super) fn load_source(
    source: &Source,
    policies: &mut PolicySet,
    meta: &mut HashMap<PolicyId, PolicyMeta>,
    problems: &mut Vec<LoadProblem>,
) {
    let parsed = match PolicySet::from_str(&source.text) {
        Ok(parsed) => parsed,
        Err(errors) => {
            for error in errors.iter() {
                let line =
                    first_label_offset(error).map(|offset| line_of_offset(&source.text, offset));
                problems.push(LoadProblem::in_file(&source.name, line, render(error)));
            }
            return;
        }
    };
    if parsed.templates().next().is_some() {
        problems.push(LoadProblem::in_file(
            &source.name,
            None,
            "templates are not supported in policy files: write static policies".to_string(),
        ));
    }
    let mut search_from = 0;
    for policy in parsed.policies() {
        let line = locate(&source.text, policy.to_cedar().as_deref(), &mut search_from);
        match read_meta(policy, &source.name, line) {
            Ok(policy_meta) => {
                let id = PolicyId::new(policy_meta.id.clone());
                if let Some(existing) = meta.get(&id) {
                    problems.push(LoadProblem::at_policy(
                        &source.name,
                        line,
                        &policy_meta.id,
                        format!(
                            "duplicate @id `{}` (first defined in {}:{})",
                            policy_meta.id, existing.file, existing.line
                        ),
                    ));
                    continue;
                }
                if let Err(error) = policies.add(policy.new_id(id.clone())) {
                    problems.push(LoadProblem::in_file(
                        &source.name,
                        Some(line),
                        error.to_string(),
                    ));
                    continue;
                }
                meta.insert(id, policy_meta);
            }
            Err(problem) => problems.push(problem),
        }
    }
}

fn read_meta(
    policy: &cedar_policy::Policy,
    file: &str,
    line: usize,
) -> Result<PolicyMeta, LoadProblem> {
    let Some(id) = policy.annotation("id").map(str::to_string) else {
        return Err(LoadProblem::in_file(
            file,
            Some(line),
            "policy has no @id annotation".to_string(),
        ));
    };
    if id.trim().is_empty() || id.chars().any(char::is_whitespace) {
        return Err(LoadProblem::at_policy(
            file,
            line,
            &id,
            format!("@id `{id}` must be non-empty without whitespace"),
        ));
    }
    let Some(reason) = policy.annotation("reason").map(str::to_string) else {
        return Err(LoadProblem::at_policy(
            file,
            line,
            &id,
            format!("policy `{id}` has no @reason annotation"),
        ));
    };
    let ask = match policy.annotation("ask") {
        None => None,
        Some(kind) => match ApprovalKind::from_str(kind) {
            Ok(kind) if policy.effect() == Effect::Forbid => Some(kind),
            Ok(_) => {
                return Err(LoadProblem::at_policy(
                    file,
                    line,
                    &id,
                    format!("@ask is only meaningful on a forbid (policy `{id}` is a permit)"),
                ))
            }
            Err(()) => {
                return Err(LoadProblem::at_policy(
                    file,
                    line,
                    &id,
                    format!(
                        "@ask(`{kind}`) is not an approval kind: use consent, grant, plan or batch"
                    ),
                ))
            }
        },
    };
    let quorum = quorum_of(policy, ask.is_some(), file, line, &id)?;
    let gate = policy.annotation("gate").is_some();
    if gate && (policy.effect() != Effect::Forbid || ask.is_some()) {
        return Err(LoadProblem::at_policy(
            file,
            line,
            &id,
            format!(
                "@gate is only meaningful on a hard forbid (policy `{id}` is a permit or asks)"
            ),
        ));
    }
    if gate && reads_approvals(policy) {
        return Err(LoadProblem::at_policy(
            file,
            line,
            &id,
            format!(
                "@gate decides before anything is asked, so it cannot read the approvals given \
                 (policy `{id}` reads context.approvals)"
            ),
        ));
    }
    let upstream = if gate {
        upstream_reads(policy)
    } else {
        Vec::new()
    };
    let step_up = step_up(policy, ask.is_some())
        .map_err(|why| LoadProblem::at_policy(file, line, &id, why))?;
    let rate_limit = policy.annotation("rate_limit").is_some();
    if rate_limit && (policy.effect() != Effect::Forbid || ask.is_some()) {
        return Err(LoadProblem::at_policy(
            file,
            line,
            &id,
            "@rate_limit is only meaningful on a hard forbid: this one is a permit or asks"
                .to_string(),
        ));
    }
    Ok(PolicyMeta {
        id,
        file: file.to_string(),
        line,
        effect: policy.effect(),
        reason,
        ask,
        quorum,
        gate,
        upstream,
        step_up,
        rate_limit,
    })
}

/// The scopes of a policy's `@step_up`: only on a hard forbid, one or more RFC 6749 scope
/// tokens separated by spaces.
fn step_up(policy: &Policy, asks: bool) -> Result<Vec<String>, String> {
    let Some(given) = policy.annotation("step_up") else {
        return Ok(Vec::new());
    };
    if policy.effect() != Effect::Forbid || asks {
        return Err(
            "@step_up is only meaningful on a hard forbid (a token with the scope would not \
             meet its condition): this one is a permit or asks"
                .to_string(),
        );
    }
    let scopes: Vec<String> = given.split(' ').map(str::to_string).collect();
    let token = |scope: &String| {
        !scope.is_empty()
            && scope.bytes().all(|byte| {
                byte == 0x21 || (0x23..=0x5b).contains(&byte) || (0x5d..=0x7e).contains(&byte)
            })
    };
    if scopes.iter().all(token) {
        Ok(scopes)
    } else {
        Err(format!(
            "@step_up(`{given}`) is not a list of OAuth scopes (printable ASCII without `\"` or \
             `\\`, separated by single spaces)"
        ))
    }
}

/// The most distinct approvers a `@quorum` may ask for: every vote is kept with its approval,
/// so the number is bounded.
pub const MAX_QUORUM: u8 = 10;

/// `@quorum("N")`: how many distinct approvers an `@ask` policy's approval needs, 1 to
/// [`MAX_QUORUM`]; only meaningful on an `@ask`.
fn quorum_of(
    policy: &Policy,
    asks: bool,
    file: &str,
    line: usize,
    id: &str,
) -> Result<Option<u8>, LoadProblem> {
    let Some(text) = policy.annotation("quorum") else {
        return Ok(None);
    };
    let problem = |message: String| Err(LoadProblem::at_policy(file, line, id, message));
    if !asks {
        return problem(format!(
            "@quorum is only meaningful on an @ask policy (policy `{id}` asks for no approval)"
        ));
    }
    match text.trim().parse::<u8>() {
        Ok(quorum) if (1..=MAX_QUORUM).contains(&quorum) && text.trim() == text => Ok(Some(quorum)),
        _ => problem(format!(
            "@quorum(`{text}`) is not a number of approvers from 1 to {MAX_QUORUM}"
        )),
    }
}

/// The facts askgate learns only from the upstream: the server's grants and the project's
/// identity (Design), the attached project's detail (Projects). A `@gate` is asked before they
/// are fetched, on their unobserved values (`server::gateway`'s local facts), so a gate that
/// reads one can never act as a gate (issue 38 §5). `projects.resolved_path` is not listed:
/// it is known before for every path with a `/`, the ones a gate on a folder names.
pub const UPSTREAM_FACTS: [&str; 8] = [
    "design.grant.server",
    "design.identity_verified",
    "design.sharing_scope",
    "projects.detail_known",
    "projects.knowledge_known",
    "projects.knowledge_size",
    "projects.max_knowledge_size",
    "projects.target_kind",
];

/// Which of [`UPSTREAM_FACTS`] a policy's condition reads (as `context.…`).
fn upstream_reads(policy: &Policy) -> Vec<String> {
    let context = Reads::of(policy).context;
    UPSTREAM_FACTS
        .iter()
        .filter(|fact| reads_path(&context, fact.split('.')))
        .map(|fact| format!("context.{fact}"))
        .collect()
}

/// Whether `tree` reads the value at `path` (a whole record read reads all of it; a `has`
/// alone reads no value).
fn reads_path<'a>(tree: &Tree, mut path: impl Iterator<Item = &'a str>) -> bool {
    match tree {
        Tree::Whole | Tree::Probed(_) => true,
        Tree::Present => false,
        Tree::Fields(fields) => match path.next() {
            None => !fields.is_empty(),
            Some(key) => fields.get(key).is_some_and(|tree| reads_path(tree, path)),
        },
    }
}

/// Whether a policy's condition reads `context.approvals` (or the whole context).
fn reads_approvals(policy: &Policy) -> bool {
    match Reads::of(policy).context {
        Tree::Fields(fields) => fields.contains_key("approvals"),
        _ => true,
    }
}

pub(super) fn validate(
    schema: &Schema,
    policies: &PolicySet,
    meta: &HashMap<PolicyId, PolicyMeta>,
    sources: &[Source],
    problems: &mut Vec<LoadProblem>,
) {
    let result = Validator::new(schema.clone()).validate(policies, ValidationMode::Strict);
    for error in result.validation_errors() {
        let policy_meta = meta.get(error.policy_id());
        let file = policy_meta.map_or("<unknown>", |m| m.file.as_str());
        let text = sources
            .iter()
            .find(|s| s.name == file)
            .map_or("", |s| s.text.as_str());
        let line = first_label_offset(error)
            .map(|offset| line_of_offset(text, offset))
            .or(policy_meta.map(|m| m.line))
            .unwrap_or(1);
        let id = policy_meta.map_or_else(|| error.policy_id().to_string(), |m| m.id.clone());
        problems.push(LoadProblem::at_policy(file, line, &id, render(error)));
    }
}

/// The line where the policy's own text starts, searching forward from the previous policy.
fn locate(text: &str, policy_text: Option<&str>, search_from: &mut usize) -> usize {
    let Some(policy_text) = policy_text else {
        return line_of_offset(text, *search_from);
    };
    let rest = text.get(*search_from..).unwrap_or("");
    match rest.find(policy_text) {
        Some(found) => {
            let offset = *search_from + found;
            *search_from = offset + policy_text.len();
            line_of_offset(text, offset)
        }
        None => line_of_offset(text, *search_from),
    }
}

fn first_label_offset(error: &dyn miette::Diagnostic) -> Option<usize> {
    error
        .labels()
        .and_then(|mut labels| labels.next())
        .map(|label| label.offset())
}

/// The error with its causes and help, on one line.
fn render(error: &dyn miette::Diagnostic) -> String {
    let mut message = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = cause.source();
    }
    if let Some(help) = error.help() {
        message.push_str(&format!(" (help: {help})"));
    }
    message
}

pub(super) fn content_hash(schema: &Source, sources: &[Source]) -> String {
    let mut hasher = Sha256::new();
    let ordered: BTreeSet<(&str, &str)> = sources
        .iter()
        .map(|s| (s.name.as_str(), s.text.as_str()))
        .collect();
    hasher.update(schema.text.as_bytes());
    for (name, text) in ordered {
        hasher.update([0u8]);
        hasher.update(name.as_bytes());
        hasher.update([0u8]);
        hasher.update(text.as_bytes());
    }
    let digest = hasher.finalize();
    let hex: String = digest
        .iter()
        .take(8)
        .map(|byte| format!("{byte:02x}"))
        .collect();
    format!("sha256:{hex}")
}

#[cfg(test)]
mod tests {
    use crate::authz::{baseline, PolicySnapshot, Source};

    fn load_with(text: &str) -> Result<PolicySnapshot, String> {
        let mut sources = baseline::policy_sources();
        sources.push(Source::new("extra.cedar", text.to_string()));
        PolicySnapshot::load(&baseline::schema_source(), &sources).map_err(|e| e.to_string())
    }

    /// A gate reading a fact known only from the upstream loads with a warning naming it.
    #[test]
    fn i38_a_gate_that_reads_upstream_facts_loads_with_them_named() {
        let rule = r#"
@id("extra.budget-gate")
@reason("too big")
@gate
forbid (principal, action == Action::"project_write", resource)
when { context.projects.knowledge_size > 10 && context.projects.attached };
"#;
        let snapshot = load_with(rule).unwrap();
        let warnings = snapshot.warnings();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        let warning = warnings[0].to_string();
        assert!(
            warning.contains("policy `extra.budget-gate`")
                && warning.contains("context.projects.knowledge_size")
                && !warning.contains("attached"),
            "{warning}"
        );
        // Without @gate it is an ordinary forbid: nothing to warn about.
        let plain = load_with(&rule.replace("@gate\n", "")).unwrap();
        assert!(plain.warnings().is_empty());
        // The shipped gates read only what is known before the upstream is asked.
        let shipped = load_with("").unwrap();
        assert!(shipped.warnings().is_empty(), "{:?}", shipped.warnings());
    }

    /// A gate decides before anything is asked, so one reading the approvals is refused with
    /// its file and id; the same rule without the annotation loads.
    #[test]
    fn a_gate_that_reads_the_approvals_is_refused() {
        let rule = r#"
@id("extra.gate")
@reason("r")
@gate
forbid (principal, action in Action::"ClaudeDesign", resource)
when { context.approvals.contains("batch") && context.environment.essential_traffic_only };"#;
        let error = load_with(rule).unwrap_err();
        assert!(error.contains("extra.cedar"), "{error}");
        assert!(
            error.contains("policy `extra.gate` reads context.approvals"),
            "{error}"
        );
        assert!(load_with(&rule.replace("@gate\n", "")).is_ok());
    }

    const QUORUM_DELETE: &str = r#"
@id("extra.two-owners")
@ask("batch")
@quorum("2")
@reason("destructive deletes need two owners")
forbid (principal, action == Action::"project_delete", resource)
unless { context.approvals.contains("batch") };"#;

    /// `@quorum("2")` on an `@ask` loads and is the snapshot's quorum for an ask it
    /// determines; a number outside 1..=10, or on a policy that asks nothing, is refused with
    /// its file and id (issue 35 §2).
    #[test]
    fn i35_a_quorum_annotation_loads_and_a_bad_one_names_its_policy() {
        let snapshot = load_with(QUORUM_DELETE).unwrap();
        let ids = vec!["extra.two-owners".to_string(), "other".to_string()];
        assert_eq!(snapshot.quorum(&ids), 2);
        assert_eq!(snapshot.quorum(&["other".to_string()]), 1);
        for bad in ["0", "11", "two", " 2", "-1", ""] {
            let rule = QUORUM_DELETE.replace("@quorum(\"2\")", &format!("@quorum(\"{bad}\")"));
            let error = load_with(&rule).unwrap_err();
            assert!(
                error.contains("extra.cedar")
                    && error.contains("extra.two-owners")
                    && error.contains("not a number of approvers from 1 to 10"),
                "{bad:?}: {error}"
            );
        }
        let plain = QUORUM_DELETE.replace("@ask(\"batch\")\n", "");
        let error = load_with(&plain).unwrap_err();
        assert!(
            error.contains("@quorum is only meaningful on an @ask policy"),
            "{error}"
        );
    }
}
