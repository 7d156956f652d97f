//! What a transient may not be: its memory requirements must make sense, it starts each
//! execution with nothing in it, only the GPU inside the execution touches it, and its first
//! use writes all of it without reading.

use crate::error::{Error, Result};
use crate::plan::transient::any;
use crate::plan::{PlanInput, ResourceKind, SegmentState, UseDecl};
use ash::vk;

/// Refuses transients that cannot be planned. Runs after the planner's own validation, so
/// indices and ranges are known to be in bounds and no pass has two overlapping uses of one
/// resource of which one writes.
pub(super) fn validate(input: &PlanInput) -> Result<()> {
    if !any(input) {
        // Nothing to check, and nothing allocated for a graph without transients.
        return Ok(());
    }
    check(input)
}

/// Checks each transient's memory and first use.
fn check(input: &PlanInput) -> Result<()> {
    let first = super::lifetime::first_passes(input);
    for (r, res) in input.resources.iter().enumerate() {
        let Some(m) = res.transient else { continue };
        let bad = |why: &str| {
            Err(Error::InvalidInput(format!(
                "transient `{}`: {why}",
                res.name
            )))
        };
        if m.size == 0 {
            return bad("its memory size is 0");
        }
        if !m.alignment.is_power_of_two() || !m.buffer_image_granularity.is_power_of_two() {
            return bad("its alignment and bufferImageGranularity must be powers of two");
        }
        if m.memory_type_bits == 0 {
            return bad("its memoryTypeBits are empty");
        }
        if matches!(res.kind, ResourceKind::Buffer { .. }) && !m.linear {
            return bad("a buffer is linear (`TransientMemory::buffer`)");
        }
        if res
            .initial
            .iter()
            .any(|(_, s)| *s != SegmentState::default())
        {
            return bad(
                "it has an initial state, but its contents live only inside one execution \
                 (give it the fresh state of `ResourceDecl::image` or `ResourceDecl::buffer`)",
            );
        }
        let Some(p) = first[r] else { continue };
        let pass = &input.passes[p];
        // Other uses of it in this pass overlap a whole-range write and were refused already.
        let uses = || pass.uses.iter().filter(|u| u.resource == r);
        let whole_write = uses().all(|u| writes_all_without_reading(u, &res.kind))
            && every_plane(uses(), &res.kind);
        if !whole_write {
            return Err(Error::InvalidInput(format!(
                "transient `{}` is first used by pass `{}`, which reads it or writes only part \
                 of it: the first use of a transient must write all of it without reading \
                 (a write access of the whole range, `discard()` if the access also reads)",
                res.name, pass.name
            )));
        }
    }
    for pass in &input.passes {
        for w in &pass.waits {
            if let Some(&g) = w
                .guards
                .iter()
                .find(|&&g| input.resources[g].transient.is_some())
            {
                return Err(Error::InvalidInput(format!(
                    "pass `{}` guards transient `{}` with a binary semaphore: a transient's \
                     contents come from this execution only",
                    pass.name, input.resources[g].name
                )));
            }
        }
        for u in &pass.uses {
            let res = &input.resources[u.resource];
            let outside = u.access.stages.is_empty()
                || u.access.stages.intersects(vk::PipelineStageFlags2::HOST);
            if res.transient.is_some() && outside {
                return Err(Error::InvalidInput(format!(
                    "pass `{}` hands transient `{}` to the host or the presentation engine, \
                     which access it outside the execution its memory belongs to",
                    pass.name, res.name
                )));
            }
        }
    }
    Ok(())
}

/// Whether `u` writes every cell of a resource of `kind` and reads none of its old contents.
/// Whether `uses` together cover every plane of the resource: one of them covers all its
/// aspects, or (a depth/stencil image) one covers depth and another stencil.
fn every_plane<'a>(uses: impl Iterator<Item = &'a UseDecl>, kind: &ResourceKind) -> bool {
    let Some(grid) = kind.grid() else {
        return true;
    };
    let mut covered = vk::ImageAspectFlags::empty();
    for u in uses {
        covered |= grid.narrowed(u.aspect).unwrap_or(grid.aspect);
    }
    covered.contains(grid.aspect)
}

fn writes_all_without_reading(u: &UseDecl, kind: &ResourceKind) -> bool {
    let whole = u.range.is_none_or(|r| r == kind.whole());
    let reads = !u.discard && !(u.access.access & !u.access.write_bits()).is_empty();
    whole && u.access.is_write() && !reads
}
