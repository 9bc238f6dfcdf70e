//! Turns raw `ClaudeDesign` and `Projects` tool inputs into validated calls with safety hints;
//! it must not decide permissions, build Cedar requests, read paths or talk to the network.
//!
//! Map of the module:
//! - `catalog`: the loosely parsed server `tools/list` result and its hash (§1.2);
//! - `operations`: the static operation table and the hint merge (§1.2, §1.3);
//! - `schema`: the static description of each operation's arguments (§1.4);
//! - `arguments` (private): the §1.4 type and size checks;
//! - `design`: [`DesignCall`], the validated Design input (§1.1, §1.4);
//! - `projects`: [`ProjectsCall`], the validated Projects input (§10.1);
//! - `project_id` (private): every project id a call names is a string passing `znS`;
//! - `suggest` (private): "did you mean" hints;
//! - `digest`: a raw call's digest over its canonical JSON (what attestations, sealed states
//!   and approvals are bound to);
//! - `error`: [`CallError`], naming the offending field.

mod arguments;
pub mod catalog;
pub mod design;
pub mod digest;
pub mod error;
pub mod operations;
mod project_id;
pub mod projects;
pub mod schema;
mod suggest;

#[cfg(test)]
mod arguments_tests;
#[cfg(test)]
mod design_tests;
#[cfg(test)]
mod hostile_tests;
#[cfg(test)]
mod keys_and_choices_tests;
#[cfg(test)]
mod operations_tests;
#[cfg(test)]
mod projects_tests;
#[cfg(test)]
mod test_support;

pub use catalog::{Catalog, CatalogTool};
pub use design::DesignCall;
pub use error::CallError;
pub use operations::{
    effective_hints, static_operation, OperationHints, Provenance, StaticOperation,
};
pub use projects::{ProjectsCall, ProjectsMethod, WriteSource};
pub use schema::ArgumentSchema;
