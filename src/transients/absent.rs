//! The graph's transients in a build without the `transients` feature: there are none, so
//! there is nothing to check or bind. The planner refuses transient declarations, and the
//! graph has no method that makes a transient handle.

use crate::completion::CompletionToken;
use crate::debug::DebugUtils;
use crate::error::Result;
use crate::plan::Plan;
use crate::resource::Resource;
use std::convert::Infallible;
use std::sync::Arc;

/// No transients: what the graph's pools keep in their place.
pub(crate) struct Transients;

impl Transients {
    pub(crate) fn new(_device: Arc<ash::Device>) -> Self {
        Transients
    }

    /// Nothing to check: no plan has transients.
    pub(crate) fn check_budget(&self, _plan: &Plan) -> Result<()> {
        Ok(())
    }

    /// Nothing to bind, so never a guard to keep: no plan has transients.
    pub(crate) fn bind(
        &self,
        _plan: &Plan,
        _resources: &[Resource],
        _token: &CompletionToken,
        _debug: Option<&DebugUtils>,
    ) -> Result<Option<Infallible>> {
        Ok(None)
    }
}
