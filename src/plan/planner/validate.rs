//! Input validation: everything that makes a plan impossible is refused before the planner
//! changes any state. Then the valid input is narrowed to the stages its queues run.
//!
//! # Last uses
//!
//! Two accesses end a resource's use in its graph, a present and a host access: nothing in the
//! same graph may use the resource after them.
//!
//! - **Present.** After `vkQueuePresentKHR` the application must not use a swapchain image
//!   until `vkAcquireNextImageKHR` returns it again (WSI chapter: "use of a presentable image
//!   must occur only after the image is returned by vkAcquireNextImageKHR, and before it is
//!   released by vkQueuePresentKHR"; layout transitions included). No barrier or semaphore
//!   orders an access after the presentation engine's read; only a new acquire does, and that
//!   acquire cannot return an image this graph presents: the app acquires before it submits
//!   the graph, while it still holds the image. Only images are presented.
//! - **Host access.** A [`Access::HOST_READ`] or [`Access::HOST_WRITE`] pass makes the GPU's
//!   writes available to the host; the host itself reads or writes only once the execution's
//!   fence has signalled, after every pass of the graph. A use of the resource later in the
//!   same graph would run before the host access it follows in program order, and no barrier
//!   or semaphore can wait for the host there.
//!
//! So any use after either, in the same graph, is an input error; the next graph may use the
//! resource again.
//!
//! # Stage masks that fit the queue
//!
//! Once the input is valid, every access is narrowed to the stages its queue's family
//! supports before planning, so that no barrier, ownership transfer or semaphore the planner
//! derives from it names a stage the family lacks (`VUID-vkCmdPipelineBarrier2-srcStageMask-03849`
//! and friends). The rule itself is [`crate::access::supported_stages`].

use super::*;
use crate::access::narrow_stages;

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
        check_binary_stages(pass)?;
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
            check_unordered(pass, res, u)?;
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
    check_last_uses(input)
}

/// No explicit stage mask of a pass's binary semaphore wait or signal names `HOST`:
/// Vulkan forbids it in `VkSemaphoreSubmitInfo::stageMask`, and the host is no queue stage a
/// semaphore could order. A mask the planner derives itself drops `HOST` instead
/// ([`super::device_stages::DeviceStages`]); a mask the app states is refused, since
/// rewriting it would silently order something else than what the app asked for.
fn check_binary_stages(pass: &PassDecl) -> Result<()> {
    if pass.waits.is_empty() && pass.signals.is_empty() {
        return Ok(());
    }
    let host = |s: &Option<vk::PipelineStageFlags2>| {
        s.is_some_and(|s| s.intersects(vk::PipelineStageFlags2::HOST))
    };
    let waits = pass.waits.iter().filter(|w| host(&w.stages));
    let signals = pass.signals.iter().filter(|s| host(&s.stages));
    let bad = waits
        .map(|w| ("waits on", w.semaphore, w.stages))
        .chain(signals.map(|s| ("signals", s.semaphore, s.stages)))
        .next();
    match bad {
        Some((what, semaphore, Some(stages))) => Err(Error::InvalidInput(format!(
            "pass `{}` {what} binary semaphore {semaphore:?} at {stages:?}, which names HOST: \
             a semaphore's stage mask holds device stages only (the host is ordered by the \
             execution's fence); name the device stages, or none to let the planner derive them",
            pass.name
        ))),
        _ => Ok(()),
    }
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
                .map(|r| r.queue)
                .chain(st.visible.iter().map(|v| v.queue))
                .any(|q| q >= input.queues.len());
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

/// An unordered use is a write that keeps the old contents and the layout (a discard or a
/// render pass's own transition is an ordinary write), and its region is of the resource's
/// kind, not empty, and for a buffer inside the use's bytes.
fn check_unordered(pass: &PassDecl, res: &ResourceDecl, u: &UseDecl) -> Result<()> {
    let Some(unordered) = u.unordered else {
        return Ok(());
    };
    let refuse = |why: &str| {
        Err(Error::InvalidInput(format!(
            "pass `{}` declares an unordered use of `{}` that {why}",
            pass.name, res.name
        )))
    };
    if !u.access.is_write() {
        return refuse("only reads: reads need no ordering among themselves anyway");
    }
    if u.discards() {
        return refuse("discards: a discard overwrites what the other writes of its group made");
    }
    if u.render_pass_transitions() {
        return refuse("its render pass moves to another layout: a transition is ordered");
    }
    let Unordered::Disjoint(region) = unordered else {
        return Ok(());
    };
    let bytes = match u.range {
        Some(SubRange::Buffer(b)) => Some(b.bytes()),
        _ => match res.kind {
            ResourceKind::Buffer { size, .. } => Some(0..size),
            ResourceKind::Image { .. } => None,
        },
    };
    match (region, bytes) {
        _ if region.is_empty() => refuse(&format!("writes an empty region {region:?}")),
        (Region::Texels { .. }, None) => Ok(()),
        (Region::Bytes(b), Some(range)) => {
            let end = b.offset.checked_add(b.size);
            if range.start <= b.offset && end.is_some_and(|e| e <= range.end) {
                Ok(())
            } else {
                refuse(&format!(
                    "writes bytes at {} (size {}) outside the bytes {range:?} it declares",
                    b.offset, b.size
                ))
            }
        }
        _ => refuse(&format!(
            "writes {region:?}: texels for an image, bytes for a buffer"
        )),
    }
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

/// Whether `a` hands the image to the presentation engine ([`Access::PRESENT`]).
pub(super) fn is_present(a: &Access) -> bool {
    a.stages.is_empty() && a.layout == Access::PRESENT.layout
}

/// Whether `a` is an access of the host, which happens after the execution's fence.
fn is_host(a: &Access) -> bool {
    a.stages.intersects(vk::PipelineStageFlags2::HOST)
}

/// Refuses a present of a buffer, and any use of a resource after a pass presented it or
/// declared a host access to it. Indices were validated before.
fn check_last_uses(input: &PlanInput) -> Result<()> {
    // Per resource: the pass whose access ended its use in this graph, and whether it was a
    // present.
    // Made at the first such access: most graphs have none.
    let mut ended_by: Vec<Option<(usize, bool)>> = Vec::new();
    for (pi, pass) in input.passes.iter().enumerate() {
        for u in &pass.uses {
            let resource = &input.resources[u.resource];
            if let Some(&Some((by, present))) = ended_by.get(u.resource) {
                let why = if present {
                    "presented it: a presented image belongs to the presentation engine until \
                     an acquire returns it, in a later graph"
                } else {
                    "declared a host access to it: the host acts only once the execution's fence \
                     signals, after every pass of the graph; use it again in a later graph"
                };
                return Err(Error::InvalidInput(format!(
                    "pass `{}` uses `{}` after pass `{}` {why}",
                    pass.name, resource.name, input.passes[by].name
                )));
            }
            if is_present(&u.access) && matches!(resource.kind, ResourceKind::Buffer { .. }) {
                return Err(Error::InvalidInput(format!(
                    "pass `{}` presents `{}`, a buffer: only swapchain images are presented",
                    pass.name, resource.name
                )));
            }
        }
        for u in &pass.uses {
            let ended = if is_present(&u.access) {
                (pi, true)
            } else if is_host(&u.access) {
                (pi, false)
            } else {
                continue;
            };
            ended_by.resize(input.resources.len(), None);
            ended_by[u.resource] = Some(ended);
        }
    }
    Ok(())
}

/// `stages` as a mask recorded on a queue with `caps`: narrowed to what the queue supports, or
/// `ALL_COMMANDS` where nothing is left. That happens for stages another queue ran (a scope
/// on this queue that chains from a semaphore wait cannot name them) and for state an app
/// declared with stages its queue cannot run: all commands covers whatever ran.
pub(super) fn on_queue(
    stages: vk::PipelineStageFlags2,
    caps: vk::QueueFlags,
) -> vk::PipelineStageFlags2 {
    let s = narrow_stages(stages, caps);
    if s.is_empty() {
        vk::PipelineStageFlags2::ALL_COMMANDS
    } else {
        s
    }
}

/// Narrows every stage mask of a validated input to its queue: the uses' stages, the binary
/// waits' and signals' stages an app gave, and the stages recorded in the resources' initial
/// states. The plan keeps the narrowed declarations, so the verifier and the display see the
/// stages the queue really runs.
pub(super) fn narrow_input(input: &mut PlanInput) {
    let caps: SmallVec<[vk::QueueFlags; 4]> = input.queues.iter().map(|q| q.caps).collect();
    for pass in &mut input.passes {
        let c = caps[pass.queue];
        for u in &mut pass.uses {
            // `check_use` refused uses that lose every stage; Present has none to lose.
            u.access.stages = narrow_stages(u.access.stages, c);
        }
        for w in &mut pass.waits {
            w.stages = w.stages.map(|s| on_queue(s, c));
        }
        for s in &mut pass.signals {
            s.stages = s.stages.map(|st| on_queue(st, c));
        }
    }
    let fix = |r: &mut Recorded<usize>| {
        if !r.stages.is_empty() {
            r.stages = on_queue(r.stages, caps[r.queue]);
        }
    };
    for res in &mut input.resources {
        for (_, st) in &mut res.initial {
            st.write.iter_mut().for_each(fix);
            st.reads.iter_mut().for_each(fix);
        }
    }
}
