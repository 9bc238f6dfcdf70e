//! authz::snapshot: one immutable, strictly validated policy set with its schema, per-policy
//! metadata, evaluation index and content hash. Built off to the side, then shared read-only;
//! it never reads files itself (callers hand it sources).

use std::collections::HashMap;

use cedar_policy::{Effect, Entities, PolicyId, PolicySet, Schema};

use super::cache::index::PolicyIndex;
use super::cache::{AnswerCache, Answers};
use super::load::{content_hash, load_source, parse_schema, validate};
use super::problem::{LoadError, LoadProblem};
use crate::authz::ApprovalKind;

/// One policy or schema file: its display name (a path) and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    pub name: String,
    pub text: String,
}

impl Source {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            text: text.into(),
        }
    }
}

/// What askgate knows about one policy, read from its annotations at load time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyMeta {
    pub id: String,
    pub file: String,
    pub line: usize,
    pub effect: Effect,
    /// The `@reason` text; may hold `{path.to.fact}` placeholders.
    pub reason: String,
    /// The approval kind named by `@ask`, for forbids that a human approval lifts.
    pub ask: Option<ApprovalKind>,
    /// `@quorum("N")` on an `@ask`: the approval needs N distinct approvers (1..=10).
    pub quorum: Option<u8>,
    /// `@gate`: a hard forbid whose condition reads only facts known before any upstream
    /// observation (environment, session, the call itself). When one determines a deny, nothing
    /// is fetched upstream for the call.
    pub gate: bool,
    /// The facts known only after the upstream is asked that a `@gate` reads
    /// (`load::UPSTREAM_FACTS`): it is asked before they are, so it can never act as a gate.
    pub upstream: Vec<String>,
    /// `@step_up("scope …")`: a hard forbid a token with these OAuth scopes would not meet
    /// (its condition reads `context.caller.scopes`). When one determines a deny, the front
    /// doors answer OAuth's step-up challenge, `insufficient_scope` with these scopes.
    pub step_up: Vec<String>,
    /// `@rate_limit`: a hard forbid on the caller's rate (`context.caller.usage.rate_limited`).
    /// When such policies alone determine a deny, the front doors answer it as a rate limit
    /// (429 with `Retry-After` over HTTP) naming the time to wait.
    pub rate_limit: bool,
}

/// A validated policy set ready for evaluation.
#[derive(Debug)]
pub struct PolicySnapshot {
    policies: PolicySet,
    meta: HashMap<PolicyId, PolicyMeta>,
    index: PolicyIndex,
    action_entities: Entities,
    /// The schema the set was validated against (the reference evaluation shapes whole
    /// contexts with it, `authz::reference`).
    schema: Schema,
    hash: String,
    /// Answers are a pure function of this (immutable) snapshot and the request, so they are
    /// cached for the snapshot's life, up to a bound.
    cache: AnswerCache,
}

impl PolicySnapshot {
    /// Parses, renames (ids from `@id`), checks annotations and validates `sources` against
    /// `schema` in strict mode. Every problem of every file is reported, not just the first.
    pub fn load(schema: &Source, sources: &[Source]) -> Result<Self, LoadError> {
        // Cedar recurses per nesting level: built on a stack of its own whichever thread asks
        // (a reload runs on a runtime worker), past the limits' checks (P5).
        super::limits::on_build_stack(|| Self::build(schema, sources))
    }

    fn build(schema: &Source, sources: &[Source]) -> Result<Self, LoadError> {
        let too_big: Vec<LoadProblem> = sources
            .iter()
            .flat_map(|source| super::limits::check(&source.name, &source.text))
            .collect();
        if !too_big.is_empty() {
            return Err(LoadError { problems: too_big });
        }
        let schema_value = parse_schema(schema)?;
        let mut problems = Vec::new();
        let mut policies = PolicySet::new();
        let mut meta = HashMap::new();
        for source in sources {
            load_source(source, &mut policies, &mut meta, &mut problems);
        }
        if problems.is_empty() {
            validate(&schema_value, &policies, &meta, sources, &mut problems);
        }
        if !problems.is_empty() {
            return Err(LoadError { problems });
        }
        let action_entities = schema_value.action_entities().map_err(|error| {
            LoadError::single(LoadProblem::in_file(&schema.name, None, error.to_string()))
        })?;
        let index = PolicyIndex::build(&policies, &schema_value, &action_entities)?;
        Ok(Self {
            hash: content_hash(schema, sources),
            policies,
            meta,
            index,
            action_entities,
            schema: schema_value,
            cache: AnswerCache::default(),
        })
    }

    /// The whole policy set (for the engine-floor benchmark and listing).
    pub fn policies(&self) -> &PolicySet {
        &self.policies
    }

    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    pub fn index(&self) -> &PolicyIndex {
        &self.index
    }

    /// The schema's action entities: action groups only work with them in the store.
    pub fn action_entities(&self) -> &Entities {
        &self.action_entities
    }

    pub fn meta(&self, id: &PolicyId) -> Option<&PolicyMeta> {
        self.meta.get(id)
    }

    /// The OAuth scopes the determining policies `policies` of a deny ask for (`@step_up`),
    /// sorted, each once; empty unless every one of them is a step-up (more scope would not
    /// lift a deny another policy also makes).
    pub fn step_up_scopes(&self, policies: &[String]) -> Vec<String> {
        let mut scopes = Vec::new();
        for id in policies {
            match self.meta.get(&PolicyId::new(id)) {
                Some(meta) if !meta.step_up.is_empty() => {
                    scopes.extend(meta.step_up.iter().cloned())
                }
                _ => return Vec::new(),
            }
        }
        scopes.sort();
        scopes.dedup();
        scopes
    }

    /// Whether the determining policies `policies` of a deny are all `@rate_limit` (and there
    /// is at least one): waiting would lift it.
    pub fn rate_limits(&self, policies: &[String]) -> bool {
        !policies.is_empty()
            && policies.iter().all(|id| {
                self.meta
                    .get(&PolicyId::new(id))
                    .is_some_and(|meta| meta.rate_limit)
            })
    }

    /// What loads but does not do what it says, one line per policy (`validate` prints them,
    /// `serve` logs them): a `@gate` reading facts known only after the upstream is asked.
    pub fn warnings(&self) -> Vec<LoadProblem> {
        let mut warnings: Vec<LoadProblem> = self
            .meta
            .values()
            .filter(|meta| !meta.upstream.is_empty())
            .map(|meta| {
                LoadProblem::at_policy(
                    &meta.file,
                    meta.line,
                    &meta.id,
                    format!(
                        "warning: @gate reads {}, known only after the upstream is asked; gates \
                         are asked before that, on unobserved values (false, 0, \"\", \"unknown\"), \
                         where this policy may deny a call the observed facts allow, so it can \
                         never act as a gate: drop @gate to make it an ordinary forbid",
                        meta.upstream.join(", ")
                    ),
                )
            })
            .collect();
        warnings.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
        warnings
    }

    /// Whether a deny is final before any observation: one of its determining policies is a
    /// `@gate`, which holds whatever the upstream would say (a forbid always wins).
    pub fn denied_by_gate(&self, decision: &super::Decision) -> bool {
        decision.decision == super::Outcome::Deny
            && decision.policies.iter().any(|id| {
                self.meta
                    .get(&PolicyId::new(id))
                    .is_some_and(|meta| meta.gate)
            })
    }

    /// How many distinct approvers an ask determined by `policies` needs: the largest
    /// `@quorum` among them, 1 when none says (a decision's `policies` name its ask rules).
    pub fn quorum(&self, policies: &[String]) -> u8 {
        policies
            .iter()
            .filter_map(|id| self.meta.get(&PolicyId::new(id)))
            .filter_map(|meta| meta.quorum)
            .max()
            .unwrap_or(1)
    }

    /// `sha256:` and the first 16 hex digits of the hash over the schema and every source.
    pub fn hash(&self) -> &str {
        &self.hash
    }

    pub fn len(&self) -> usize {
        self.meta.len()
    }

    /// What answers this snapshot's questions (`authz::cache`).
    pub fn answers(&self) -> Answers<'_> {
        Answers {
            index: &self.index,
            store: &self.cache,
            entities: &self.action_entities,
        }
    }

    /// The answers cached for this snapshot.
    pub fn cache(&self) -> &AnswerCache {
        &self.cache
    }

    pub fn is_empty(&self) -> bool {
        self.meta.is_empty()
    }
}
