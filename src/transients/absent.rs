//! The leaf's face in a build without the `transients` feature: there are no transients, so
//! there is nothing to place, check or bind. With no placement the planner refuses transient
//! declarations, and the graph has no method that makes a transient handle.

use crate::completion::CompletionToken;
use crate::debug::DebugUtils;
use crate::error::Result;
use crate::plan::transient::Place;
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

/// No placement: the planner refuses every transient.
pub(crate) fn placement() -> Option<&'static dyn Place> {
    None
}

/// Nothing to check: no plan places a transient.
pub(crate) fn check_placements(_plan: &Plan) -> Result<()> {
    Ok(())
}
