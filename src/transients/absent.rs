//! The leaf's face in a build without the `transients` feature: there are no transients, so
//! there is nothing to place. With no placement the planner refuses transient
//! declarations; the graph has no method that makes a transient handle, so nothing installs
//! the graph's transients and there is nothing to bind.

use crate::plan::transient::Place;

/// No placement: the planner refuses every transient.
pub(crate) fn placement() -> Option<&'static dyn Place> {
    None
}
