//! authz::reference: the plain-Cedar evaluation the answer cache is proved against. Each
//! question `decide` asks (a target's class, the call unapproved, the call approved) is put to
//! `Authorizer::is_authorized` once, with the whole context shaped by the schema from its JSON
//! form and checked against it, on the whole policy set: no slices, no
//! projection, no key, no cache. The answers are mapped to a decision by the same rules as
//! `decide` (deny > ask > allow, the same determining policies and approval card), so a
//! difference between `decide::by_reference` and `decide` is a difference in the answers.
//!
//! Slow on purpose; the differential test (`tests/cache.rs`) is its user.

use cedar_policy::{Authorizer, Context, Request};
use serde_json::Value;

use super::cache::{add, Answer, Asked};
use super::context::{CallContext, TargetContext, TargetRequestView};
use super::snapshot::PolicySnapshot;
use super::EvaluationError;

/// A request context in its whole JSON form, as the schema declares it.
pub(crate) trait Whole {
    fn whole(&self) -> Result<Value, EvaluationError>;
}

impl Whole for CallContext {
    /// The record form leaves out a person's empty groups and email, zero usage (and a rate
    /// not limited, and counts known), and an empty
    /// client, `act` chain and scopes (records
    /// and snapshots of callers without them read as before); the whole form names every
    /// attribute.
    fn whole(&self) -> Result<Value, EvaluationError> {
        let mut whole = serde_json::to_value(self)
            .map_err(|error| EvaluationError::Context(error.to_string()))?;
        let caller = whole
            .get_mut("caller")
            .and_then(Value::as_object_mut)
            .ok_or_else(|| EvaluationError::Context("the context has no caller".into()))?;
        caller.insert("groups".into(), serde_json::json!(self.caller.groups));
        caller.insert("email".into(), Value::String(self.caller.email.clone()));
        let mut usage = serde_json::to_value(self.caller.usage)
            .map_err(|error| EvaluationError::Context(error.to_string()))?;
        if let Some(usage) = usage.as_object_mut() {
            // Left out of records when not limited; named here.
            usage.insert(
                "rate_limited".into(),
                Value::Bool(self.caller.usage.rate_limited),
            );
            usage.insert(
                "retry_after_seconds".into(),
                Value::from(self.caller.usage.retry_after_seconds),
            );
            usage.insert("known".into(), Value::Bool(self.caller.usage.known));
            let counts = &self.caller.usage;
            for (name, count) in [
                ("operation_calls_hour", counts.operation_calls_hour),
                ("operation_calls_day", counts.operation_calls_day),
                ("person_calls_hour", counts.person_calls_hour),
                ("person_calls_day", counts.person_calls_day),
                ("session_calls_hour", counts.session_calls_hour),
                ("denies_hour", counts.denies_hour),
                ("denies_day", counts.denies_day),
                ("uploaded_bytes_hour", counts.uploaded_bytes_hour),
                ("uploaded_bytes_day", counts.uploaded_bytes_day),
            ] {
                usage.insert(name.into(), Value::from(count));
            }
        }
        caller.insert("usage".into(), usage);
        caller.insert("client".into(), Value::String(self.caller.client.clone()));
        caller.insert("actor".into(), Value::String(self.caller.actor.clone()));
        caller.insert("actors".into(), serde_json::json!(self.caller.actors));
        caller.insert("scopes".into(), serde_json::json!(self.caller.scopes));
        Ok(whole)
    }
}

impl Whole for TargetRequestView<'_> {
    fn whole(&self) -> Result<Value, EvaluationError> {
        let context = TargetContext::of(self.target, self.project_id, self.operation);
        serde_json::to_value(context).map_err(|error| EvaluationError::Context(error.to_string()))
    }
}

/// Cedar's answer to `asked`: one `is_authorized` on the whole policy set.
pub(crate) fn answer<R: Whole>(
    snapshot: &PolicySnapshot,
    asked: &Asked<'_, R>,
) -> Result<Answer, EvaluationError> {
    let schema = snapshot.schema();
    let context = Context::from_json_value(asked.context.whole()?, Some((schema, asked.action)))
        .map_err(|error| EvaluationError::Context(error.to_string()))?;
    let request = Request::new(
        asked.principal.clone(),
        asked.action.clone(),
        asked.resource.clone(),
        context,
        Some(schema),
    )
    .map_err(|error| EvaluationError::Request(error.to_string()))?;
    let response =
        Authorizer::new().is_authorized(&request, snapshot.policies(), snapshot.action_entities());
    let mut answer = Answer::default();
    add(&response, &mut answer);
    Ok(answer)
}
