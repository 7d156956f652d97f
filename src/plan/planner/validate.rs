//! Input validation: everything that makes a plan impossible is refused before the planner
//! changes any state.

use super::*;

/// Checks everything that makes a plan impossible, before any state changes.
pub(super) fn validate(input: &PlanInput) -> Result<()> {
    check_initial_states(input)?;
    for pass in &input.passes {
        let queue = input.queues.get(pass.queue).ok_or_else(|| {
            Error::InvalidInput(format!(
                "pass `{}` names queue {} of {}",
                pass.name,
                pass.queue,
                input.queues.len()
            ))
        })?;
        for w in &pass.waits {
            if let Some(&g) = w.guards.iter().find(|&&g| g >= input.resources.len()) {
                return Err(Error::InvalidInput(format!(
                    "pass `{}` guards resource {g} that does not exist",
                    pass.name
                )));
            }
        }
        for (ui, u) in pass.uses.iter().enumerate() {
            let res = input.resources.get(u.resource).ok_or_else(|| {
                Error::InvalidInput(format!(
                    "pass `{}` uses resource {} of {}",
                    pass.name,
                    u.resource,
                    input.resources.len()
                ))
            })?;
            let a = &u.access;
            check_meaning(pass, res, u)?;
            if !a.runs_on(queue.caps) {
                return Err(Error::QueueCapability {
                    pass: pass.name.clone(),
                    resource: res.name.clone(),
                    queue: queue.name.clone(),
                    needs: a.queue_capabilities(),
                    has: queue.caps,
                });
            }
            check_aspect(pass, res, u)?;
            check_render_pass(pass, res, u)?;
            check_range_and_usage(pass, res, u)?;
            // Two uses of one resource in one pass: overlapping writes, or two layouts.
            for v in &pass.uses[..ui] {
                if v.resource == u.resource && conflicting(&res.kind, u, v) {
                    return Err(Error::ConflictingUses {
                        pass: pass.name.clone(),
                        resource: res.name.clone(),
                    });
                }
            }
        }
    }
    super::last_use::check(input)
}

/// Each resource's initial state names queues and ranges that exist.
fn check_initial_states(input: &PlanInput) -> Result<()> {
    for res in &input.resources {
        let cells = res.kind.cells();
        for (range, st) in &res.initial {
            let bad_queue = st
                .write
                .iter()
                .chain(&st.reads)
                .any(|r| r.queue >= input.queues.len());
            if bad_queue || range.start >= range.end || range.end > cells {
                return Err(Error::InvalidInput(format!(
                    "the initial state of `{}` names a queue or a range that does not exist",
                    res.name
                )));
            }
        }
    }
    Ok(())
}

/// The range of a use is of the resource's kind and inside it, and the resource was created
/// with the usage the access needs.
fn check_range_and_usage(pass: &PassDecl, res: &ResourceDecl, u: &UseDecl) -> Result<()> {
    let a = &u.access;
    match (res.kind, u.range.unwrap_or(res.kind.whole())) {
        (
            ResourceKind::Image {
                mips,
                layers,
                usage,
                ..
            },
            SubRange::Image(r),
        ) => {
            if !r.fits(mips, layers) {
                return Err(Error::RangeOutOfBounds {
                    pass: pass.name.clone(),
                    resource: res.name.clone(),
                    detail: format!("{r:?} in an image of {mips} mips and {layers} layers"),
                });
            }
            if !usage.contains(a.image_usage) {
                return Err(Error::UsageNotAllowed {
                    pass: pass.name.clone(),
                    resource: res.name.clone(),
                    detail: format!("needs {:?}, created with {usage:?}", a.image_usage),
                });
            }
        }
        (ResourceKind::Buffer { size, usage }, SubRange::Buffer(b)) => {
            if b.size == 0 || b.offset.checked_add(b.size).is_none_or(|e| e > size) {
                return Err(Error::RangeOutOfBounds {
                    pass: pass.name.clone(),
                    resource: res.name.clone(),
                    detail: format!("{b:?} in a buffer of {size} bytes"),
                });
            }
            if !usage.contains(a.buffer_usage) {
                return Err(Error::UsageNotAllowed {
                    pass: pass.name.clone(),
                    resource: res.name.clone(),
                    detail: format!("needs {:?}, created with {usage:?}", a.buffer_usage),
                });
            }
        }
        _ => {
            return Err(Error::RangeOutOfBounds {
                pass: pass.name.clone(),
                resource: res.name.clone(),
                detail: "an image range for a buffer, or a byte range for an image".into(),
            });
        }
    }
    Ok(())
}

/// A use that contradicts itself or its resource: a discard of contents the access only reads
/// (a load op LOAD, a read-only attachment), or an attachment access on an image without that
/// aspect (a color attachment on a depth format, a depth attachment on a color format).
fn check_meaning(pass: &PassDecl, res: &ResourceDecl, u: &UseDecl) -> Result<()> {
    let a = &u.access;
    if u.discards() && !a.is_write() {
        return Err(Error::InvalidInput(format!(
            "pass `{}` discards the contents of `{}` but only reads them ({}): a load op LOAD \
             or a read-only use needs the old contents; drop the discard, or declare a write",
            pass.name,
            res.name,
            a.name().unwrap_or("a read-only access"),
        )));
    }
    let ResourceKind::Image { aspect, .. } = res.kind else {
        return Ok(());
    };
    let needs = if a
        .image_usage
        .contains(vk::ImageUsageFlags::COLOR_ATTACHMENT)
    {
        vk::ImageAspectFlags::COLOR
    } else if a
        .image_usage
        .contains(vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT)
    {
        vk::ImageAspectFlags::DEPTH | vk::ImageAspectFlags::STENCIL
    } else {
        return Ok(());
    };
    if !aspect.intersects(needs) {
        return Err(Error::InvalidInput(format!(
            "pass `{}` uses `{}` as a {} attachment, but its format has only the {aspect:?} \
             aspect",
            pass.name,
            res.name,
            if needs == vk::ImageAspectFlags::COLOR {
                "color"
            } else {
                "depth/stencil"
            },
        )));
    }
    Ok(())
}

/// An aspect must be one the image's format has; a buffer has none.
fn check_aspect(pass: &PassDecl, res: &ResourceDecl, u: &UseDecl) -> Result<()> {
    if u.aspect.is_empty() {
        return Ok(());
    }
    let problem = match res.kind {
        ResourceKind::Buffer { .. } => format!("aspect {:?} on a buffer", u.aspect),
        ResourceKind::Image { aspect, .. } if !aspect.contains(u.aspect) => {
            format!(
                "aspect {:?} of an image whose format has {aspect:?}",
                u.aspect
            )
        }
        ResourceKind::Image { .. } => return Ok(()),
    };
    Err(Error::InvalidInput(format!(
        "pass `{}` declares a use of `{}` on {problem}: name only aspects the format has \
         (DEPTH or STENCIL of a depth/stencil image), or none for all of it",
        pass.name, res.name
    )))
}

/// Whether two uses of one resource in one pass conflict: they share a cell (a range and a
/// plane) and one writes, or they want two layouts there.
fn conflicting(kind: &ResourceKind, u: &UseDecl, v: &UseDecl) -> bool {
    let whole = kind.whole();
    let (ur, vr) = (u.range.unwrap_or(whole), v.range.unwrap_or(whole));
    let overlap = match (ur, vr) {
        (SubRange::Image(x), SubRange::Image(y)) => x.overlaps(&y),
        (SubRange::Buffer(x), SubRange::Buffer(y)) => x.overlaps(&y),
        _ => false,
    };
    let Some(grid) = kind.grid() else {
        return overlap && (u.writes() || v.writes());
    };
    // Each use's plane (`None`: every plane).
    let (up, vp) = (grid.narrowed(u.aspect), grid.narrowed(v.aspect));
    let planes_meet = match (up, vp) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    };
    // The layout each wants before the pass, on its plane.
    let before = |w: &UseDecl| w.on_plane(kind).layout_before();
    overlap && planes_meet && (u.writes() || v.writes() || before(u) != before(v))
}

/// An attachment of an app's own `VkRenderPass`: an image that the graph can move to the
/// `initialLayout` and that the render pass leaves in a layout the graph can track.
fn check_render_pass(pass: &PassDecl, res: &ResourceDecl, u: &UseDecl) -> Result<()> {
    let Some(rp) = u.render_pass else {
        return Ok(());
    };
    let why = if !matches!(res.kind, ResourceKind::Image { .. }) {
        "only an image can be one".to_owned()
    } else if rp.initial_layout == vk::ImageLayout::PREINITIALIZED {
        "the graph cannot move an image to the initial layout PREINITIALIZED".to_owned()
    } else if matches!(
        rp.final_layout,
        vk::ImageLayout::UNDEFINED | vk::ImageLayout::PREINITIALIZED
    ) {
        format!(
            "a render pass cannot leave it in the final layout {:?}",
            rp.final_layout
        )
    } else {
        return Ok(());
    };
    Err(Error::InvalidInput(format!(
        "pass `{}` declares `{}` a render pass attachment, but {why}",
        pass.name, res.name
    )))
}
