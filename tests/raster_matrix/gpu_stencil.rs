//! The stencil row on the GPU (`stencil.rs`): its pipelines, the base and the stencil write,
//! the reads of either aspect, the middle read of both, and the check that a read of depth
//! alone waits for nothing and moves nothing after the stencil write.

use super::cases::*;
use super::gpu::{area, unpack, Case, Res};
use super::kit::{bind, Bind, Gfx, Kit, KitBuilder, Prog, StencilOp, SB, SI};
use super::stencil::{clear_stencil, read_aspect, test_clear};
use std::sync::Arc;
use vk_baton::ash::vk;
use vk_baton::plan::{Command, ImageBarrier, Plan};
use vk_baton::{Access, Pass, Recorder, StBuffer, StImage};
use vk_baton_context::Context;
use vk_baton_passes::render::{ColorTarget, DepthTarget, StencilTarget};
use vk_baton_shaders::matrix as spv;

const DS: Option<vk::Format> = Some(DEPTH_STENCIL);
const STENCIL: vk::ImageAspectFlags = vk::ImageAspectFlags::STENCIL;
const DEPTH_ASPECT: vk::ImageAspectFlags = vk::ImageAspectFlags::DEPTH;

/// The stencil row's pipelines.
#[derive(Clone, Copy)]
pub struct StencilProgs {
    /// Depth from the source (mode 1), stencil untested.
    base: Prog,
    /// Read-only depth test LESS, stencil REPLACE by the dynamic reference.
    write: Prog,
    /// Stencil EQUAL on one bit, adding it to red.
    bits: Prog,
    /// The depth-counting draw against a depth attachment alone.
    depth_count: Prog,
    fs: Prog,
    cs: Prog,
    /// Both aspects into one word each (the middle read).
    both: Prog,
}

impl StencilProgs {
    pub(super) fn new(k: &mut KitBuilder) -> StencilProgs {
        let ds = |g: Gfx, stencil| Gfx {
            depth: DS,
            stencil,
            ..g
        };
        StencilProgs {
            base: k.gfx(
                Gfx {
                    depth_write: Some(true),
                    ..ds(
                        Gfx::new(spv::FIXED_PLACE_VERT, spv::WRITE_DEPTH_FRAG, None),
                        Some(StencilOp::Keep),
                    )
                },
                &[SB],
            ),
            write: k.gfx(
                Gfx {
                    depth_write: Some(false),
                    ..ds(
                        Gfx::new(spv::FIXED_PLACE_VERT, spv::STENCIL_WRITE_FRAG, None),
                        Some(StencilOp::Replace),
                    )
                },
                &[],
            ),
            bits: k.gfx(
                Gfx {
                    points: false,
                    blend: true,
                    ..ds(
                        Gfx::new(spv::DEPTH_COUNT_VERT, spv::STENCIL_BITS_FRAG, Some(COLOR)),
                        Some(StencilOp::Equal),
                    )
                },
                &[],
            ),
            depth_count: k.gfx(
                Gfx {
                    points: false,
                    blend: true,
                    depth_write: Some(false),
                    ..ds(
                        Gfx::new(spv::DEPTH_COUNT_VERT, spv::DEPTH_COUNT_FRAG, Some(COLOR)),
                        None,
                    )
                },
                &[],
            ),
            fs: k.gfx(
                Gfx::new(spv::FIXED_PLACE_VERT, spv::FS_STENCIL_FRAG, Some(RESULT)),
                &[SI],
            ),
            cs: k.compute(spv::CS_STENCIL_COMP, &[SI, SB]),
            both: k.compute(spv::CS_DS_READ_COMP, &[SI, SI, SB]),
        }
    }
}

fn dispatch(prog: Prog, set: vk::DescriptorSet) -> impl FnMut(&Recorder<'_>) {
    move |r| {
        bind(r, &prog, Some(set), 0, 0);
        // SAFETY: recording, with the pipeline and set bound; one group of 8×8.
        unsafe { r.device().cmd_dispatch(r.cmd(), 1, 1, 1) };
    }
}

impl Case {
    fn data(&self) -> Arc<StImage> {
        match self.get(Slot::Data) {
            Res::Image(i) => i.clone(),
            Res::Buffer(b) => panic!("`{}` is a buffer", b.name()),
        }
    }

    fn buffer(&self, s: Slot) -> Arc<StBuffer> {
        match self.get(s) {
            Res::Buffer(b) => b.clone(),
            Res::Image(i) => panic!("`{}` is an image", i.name()),
        }
    }

    /// Clears both aspects and writes each pixel's depth from the source.
    pub(super) fn stencil_base<'k>(
        &self,
        ctx: &Context,
        kit: &'k Kit,
        s: &PassSpec,
    ) -> Box<dyn Pass + 'k> {
        let prog = kit.stencil.base;
        let set = kit.set(&prog, &[Bind::storage(self.buffer(Slot::Src).handle())]);
        let draw = move |r: &Recorder<'_>| {
            // Mode 4: depth k / 256 from the word k << 8 | r (matrix_write_depth.frag).
            bind(r, &prog, Some(set), 4, 0);
            // SAFETY: recording inside the rendering the pipeline was made for.
            unsafe { r.device().cmd_draw(r.cmd(), WORDS as u32, 1, 0, 0) };
        };
        let t = DepthTarget::clear(self.data(), 1.0);
        self.render(ctx, s, vec![], Some(t), Box::new(draw))
    }

    /// Tests depth read-only while it clears the stencil and REPLACEs it point by point, each
    /// with its own reference.
    pub(super) fn stencil_write<'k>(
        &self,
        ctx: &Context,
        kit: &'k Kit,
        s: &PassSpec,
    ) -> Box<dyn Pass + 'k> {
        let prog = kit.stencil.write;
        let refs: Vec<u32> = self.src.iter().map(|w| w & 0xff).collect();
        let draw = move |r: &Recorder<'_>| {
            bind(r, &prog, None, 0, 0);
            let (d, c) = (r.device(), r.cmd());
            for (i, &reference) in refs.iter().enumerate() {
                // SAFETY: recording inside the rendering the pipeline was made for (dynamic
                // stencil reference); point i covers pixel i.
                unsafe {
                    d.cmd_set_stencil_reference(c, vk::StencilFaceFlags::FRONT_AND_BACK, reference);
                    d.cmd_draw(c, 1, 1, i as u32, 0);
                }
            }
        };
        let stencil = StencilTarget::clear(clear_stencil(&self.pair));
        let t = DepthTarget::read_only(self.data()).stencil(stencil);
        self.render(ctx, s, vec![], Some(t), Box::new(draw))
    }

    /// The middle read (across families): both aspects, each through its own view.
    pub(super) fn stencil_middle<'k>(&self, kit: &'k Kit, s: &PassSpec) -> Box<dyn Pass + 'k> {
        let (prog, data) = (kit.stencil.both, self.data());
        let layout = middle_access(Kind::Stencil).layout;
        let binds = [
            Bind::sampled(kit.view_of(&data, DEPTH_ASPECT), layout),
            Bind::sampled(kit.view_of(&data, STENCIL), layout),
            Bind::storage(self.buffer(Slot::MidReadback).handle()),
        ];
        let set = kit.set(&prog, &binds);
        self.step(s, dispatch(prog, set))
    }

    /// The read's pass.
    pub(super) fn stencil_read<'k>(
        &self,
        ctx: &Context,
        kit: &'k Kit,
        s: &PassSpec,
        rd: Read,
    ) -> Box<dyn Pass + 'k> {
        let data = self.data();
        let layout = rd.access(Kind::Stencil).layout_in(read_aspect(rd));
        let readback = self.buffer(Slot::Readback);
        match rd {
            Read::StencilTest => self.stencil_test(ctx, kit, s),
            Read::DepthTest => self.depth_alone(kit, s),
            Read::Copy => self.step(s, move |r| copy_stencil(r, &data, &readback)),
            Read::ComputeSampled => {
                let prog = kit.stencil.cs;
                let view = kit.view_of(&data, STENCIL);
                let set = kit.set(
                    &prog,
                    &[
                        Bind::sampled(view, layout),
                        Bind::storage(readback.handle()),
                    ],
                );
                self.step(s, dispatch(prog, set))
            }
            Read::SampledFragment => {
                let prog = kit.stencil.fs;
                let view = kit.view_of(&data, STENCIL);
                let set = kit.set(&prog, &[Bind::sampled(view, layout)]);
                let out = match self.get(Slot::Out) {
                    Res::Image(i) => i.clone(),
                    Res::Buffer(_) => unreachable!(),
                };
                let zero = vk::ClearColorValue { uint32: [0; 4] };
                let draw = move |r: &Recorder<'_>| {
                    bind(r, &prog, Some(set), 0, 0);
                    // SAFETY: recording inside the rendering the pipeline was made for.
                    unsafe { r.device().cmd_draw(r.cmd(), WORDS as u32, 1, 0, 0) };
                };
                let t = ColorTarget::clear_value(out, zero);
                self.render(ctx, s, vec![t], None, Box::new(draw))
            }
            _ => unreachable!("{rd:?} does not read the stencil row"),
        }
    }

    /// Eight full-screen draws, EQUAL on one bit of the stencil each, adding the bit to red.
    fn stencil_test<'k>(&self, ctx: &Context, kit: &'k Kit, s: &PassSpec) -> Box<dyn Pass + 'k> {
        let prog = kit.stencil.bits;
        let draw = move |r: &Recorder<'_>| {
            let (d, c) = (r.device(), r.cmd());
            for bit in 0..8u32 {
                bind(r, &prog, None, bit, 0);
                let face = vk::StencilFaceFlags::FRONT_AND_BACK;
                // SAFETY: recording inside the rendering the pipeline was made for (dynamic
                // stencil reference and compare mask).
                unsafe {
                    d.cmd_set_stencil_compare_mask(c, face, 1 << bit);
                    d.cmd_set_stencil_reference(c, face, 1 << bit);
                    d.cmd_draw(c, 3, 1, 0, 0);
                }
            }
        };
        let out = match self.get(Slot::Out) {
            Res::Image(i) => i.clone(),
            Res::Buffer(_) => unreachable!(),
        };
        let t = ColorTarget::clear(out, unpack(test_clear(&self.pair)));
        let d = DepthTarget::read_only(self.data()).stencil(StencilTarget::read_only());
        self.render(ctx, s, vec![t], Some(d), Box::new(draw))
    }

    /// The depth-counting draw against the depth aspect alone: a rendering of its own with
    /// no stencil attachment, the depth in `DEPTH_READ_ONLY_OPTIMAL` (the stock `Render`
    /// attaches both aspects of a depth/stencil image).
    fn depth_alone<'k>(&self, kit: &'k Kit, s: &PassSpec) -> Box<dyn Pass + 'k> {
        let prog = kit.stencil.depth_count;
        let out = match self.get(Slot::Out) {
            Res::Image(i) => kit.view(i),
            Res::Buffer(_) => unreachable!(),
        };
        let depth = kit.view(&self.data());
        self.step(s, move |r| {
            let (d, c) = (r.device(), r.cmd());
            let color = [vk::RenderingAttachmentInfo::default()
                .image_view(out)
                .image_layout(Access::COLOR_ATTACHMENT_WRITE.layout)
                .load_op(vk::AttachmentLoadOp::CLEAR)
                .store_op(vk::AttachmentStoreOp::STORE)];
            let depth = vk::RenderingAttachmentInfo::default()
                .image_view(depth)
                .image_layout(Access::DEPTH_ATTACHMENT_READ.layout_in(DEPTH_ASPECT))
                .load_op(vk::AttachmentLoadOp::LOAD)
                .store_op(vk::AttachmentStoreOp::NONE);
            let info = vk::RenderingInfo::default()
                .render_area(area())
                .layer_count(1)
                .color_attachments(&color)
                .depth_attachment(&depth);
            let viewport = vk::Viewport {
                width: SIDE as f32,
                height: SIDE as f32,
                max_depth: 1.0,
                ..Default::default()
            };
            bind(r, &prog, None, 0, 0);
            // SAFETY: recording; the pass declared the color target (discarded, cleared here)
            // and the depth aspect read-only, in the layouts named here; the pipeline was made
            // for a color and a depth attachment, no stencil.
            unsafe {
                d.cmd_begin_rendering(c, &info);
                d.cmd_set_viewport(c, 0, &[viewport]);
                d.cmd_set_scissor(c, 0, &[area()]);
                d.cmd_draw(c, 3, DEPTH_STEPS, 0, 0);
                d.cmd_end_rendering(c);
            }
        })
    }
}

/// `vkCmdCopyImageToBuffer` of the stencil aspect (64 bytes, packed) into `dst`.
fn copy_stencil(r: &Recorder<'_>, img: &StImage, dst: &StBuffer) {
    let region = vk::BufferImageCopy {
        image_subresource: vk::ImageSubresourceLayers {
            aspect_mask: STENCIL,
            mip_level: 0,
            base_array_layer: 0,
            layer_count: 1,
        },
        image_extent: img.desc().extent,
        ..Default::default()
    };
    // SAFETY: recording; the pass declared the stencil aspect as a copy source
    // (TRANSFER_SRC_OPTIMAL) and the buffer as a copy destination.
    unsafe {
        r.device().cmd_copy_image_to_buffer(
            r.cmd(),
            img.handle(),
            vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
            dst.handle(),
            &[region],
        )
    };
}

/// The image barriers on resource `data` right before pass `pass`, on that pass's queue;
/// `None` where the plan has no such pass (another graph's).
fn barriers_before(plan: &Plan, data: &str, pass: &str) -> Option<Vec<ImageBarrier>> {
    let index = plan.input.resources.iter().position(|r| r.name == data);
    for queue in &plan.queues {
        let mut last = Vec::new();
        for c in queue.batches.iter().flat_map(|b| &b.commands) {
            match c {
                Command::Barrier(b) => last.extend(
                    b.images
                        .iter()
                        .filter(|i| Some(i.resource) == index)
                        .cloned(),
                ),
                Command::Pass(p) if plan.input.passes[*p].name == pass => return Some(last),
                Command::Pass(_) => last.clear(),
            }
        }
    }
    None
}

/// The depth read after the stencil write, on the graphics family with nothing between:
/// nothing to wait for or move (depth was read only, and stays `DEPTH_READ_ONLY_OPTIMAL`;
/// the written stencil is not read), so no barrier on the data in the graph of the write.
/// In the next graph (`same_graph` false) the planner makes the last transition visible to
/// the read again, since the state carried across graphs does not say what it was made
/// visible to (rule 8: layout, owner, last write, reads): for every image, not for planes
/// only. There, a barrier of depth alone, with no layout change and no write to make
/// available, is what is allowed. `Err` names the needless barriers.
pub fn depth_read_barriers(plan: &Plan, pair: &Pair, same_graph: bool) -> Result<(), String> {
    if (pair.kind(), pair.read) != (Kind::Stencil, Read::DepthTest) {
        return Ok(());
    }
    let read = read_passes(pair).remove(0);
    let data = format!("#{} {:?}", pair.index, Slot::Data);
    let depth_read = Access::DEPTH_ATTACHMENT_READ.layout_in(DEPTH_ASPECT);
    let visibility = |b: &ImageBarrier| {
        b.aspect == DEPTH_ASPECT
            && (b.old_layout, b.new_layout) == (depth_read, depth_read)
            && b.scopes.src_access.is_empty()
            && b.scopes.families.is_none()
    };
    let got = barriers_before(plan, &data, &read.name).unwrap_or_default();
    let needless: Vec<String> = got
        .iter()
        .filter(|b| same_graph || !visibility(b))
        .map(|b| {
            format!(
                "{:?}: {:?} -> {:?}, {:?}",
                b.aspect, b.old_layout, b.new_layout, b.scopes
            )
        })
        .collect();
    match needless.is_empty() {
        true => Ok(()),
        false => Err(format!("{}: {}", read.name, needless.join("; "))),
    }
}
