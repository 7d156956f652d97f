//! The GPU passes of the writes and the reads: what each records.

use super::cases::*;
use super::gpu::{copy_to_buffer, unpack, Case, Res};
use super::kit::{bind, Bind, Kit, Prog};
use vk_baton::ash::vk;
use vk_baton::{Pass, Recorder};
use vk_baton_context::Context;
use vk_baton_passes::render::{ColorTarget, DepthTarget, Store};

const ZERO: vk::ClearColorValue = vk::ClearColorValue { uint32: [0; 4] };

/// Binds `prog` with `set` and draws the 64 points (one per pixel).
fn points(
    prog: Prog,
    set: Option<vk::DescriptorSet>,
    mode: u32,
    depth: u32,
) -> impl FnMut(&Recorder<'_>) {
    move |r| {
        bind(r, &prog, set, mode, depth);
        // SAFETY: recording inside the rendering the pipeline was made for.
        unsafe { r.device().cmd_draw(r.cmd(), WORDS as u32, 1, 0, 0) };
    }
}

fn whole_color() -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange {
        aspect_mask: vk::ImageAspectFlags::COLOR,
        base_mip_level: 0,
        level_count: 1,
        base_array_layer: 0,
        layer_count: 1,
    }
}

fn layers(aspect: vk::ImageAspectFlags) -> vk::ImageSubresourceLayers {
    vk::ImageSubresourceLayers {
        aspect_mask: aspect,
        mip_level: 0,
        base_array_layer: 0,
        layer_count: 1,
    }
}

impl Case {
    fn buffer_of(&self, s: Slot) -> vk::Buffer {
        match self.get(s) {
            Res::Buffer(b) => b.handle(),
            Res::Image(_) => unreachable!(),
        }
    }

    fn image_of(&self, s: Slot) -> std::sync::Arc<vk_baton::StImage> {
        match self.get(s) {
            Res::Image(i) => i.clone(),
            Res::Buffer(_) => unreachable!(),
        }
    }

    /// The write's pass.
    pub(super) fn write<'k>(
        &self,
        ctx: &Context,
        kit: &'k Kit,
        s: &PassSpec,
        w: Write,
    ) -> Box<dyn Pass + 'k> {
        let src = Bind::storage;
        let clear = unpack(clear_color(&self.pair));
        let src_set = |p: &Prog| kit.set(p, &[src(self.buffer_of(Slot::Src))]);
        let storage_set = |p: &Prog| {
            kit.set(
                p,
                &[
                    src(self.buffer_of(Slot::Src)),
                    src(self.buffer_of(Slot::Data)),
                ],
            )
        };
        let scratch = || vec![ColorTarget::clear_value(self.image_of(Slot::Scratch), ZERO)];
        match w {
            Write::ColorClear => {
                let t = ColorTarget::clear(self.image_of(Slot::Data), clear);
                self.render(
                    ctx,
                    s,
                    vec![t],
                    None,
                    Box::new(points(
                        kit.write_color,
                        Some(src_set(&kit.write_color)),
                        3,
                        0,
                    )),
                )
            }
            Write::ColorLoadBlend => {
                let t = ColorTarget::load(self.image_of(Slot::Data)).blending();
                self.render(
                    ctx,
                    s,
                    vec![t],
                    None,
                    Box::new(points(
                        kit.write_blend,
                        Some(src_set(&kit.write_blend)),
                        0,
                        0,
                    )),
                )
            }
            Write::Resolve => {
                let t = ColorTarget::clear(self.image_of(Slot::Msaa), clear)
                    .resolve_into(self.image_of(Slot::Data))
                    .store(Store::DontCare);
                self.render(
                    ctx,
                    s,
                    vec![t],
                    None,
                    Box::new(points(kit.write_msaa, Some(src_set(&kit.write_msaa)), 3, 0)),
                )
            }
            Write::StencilAttachment => self.stencil_write(ctx, kit, s),
            Write::DepthAttachment => {
                let t = DepthTarget::clear(self.image_of(Slot::Data), 1.0);
                self.render(
                    ctx,
                    s,
                    vec![],
                    Some(t),
                    Box::new(points(
                        kit.write_depth,
                        Some(src_set(&kit.write_depth)),
                        0,
                        0,
                    )),
                )
            }
            Write::FragmentStorage => {
                let set = storage_set(&kit.write_fs_storage);
                self.render(
                    ctx,
                    s,
                    scratch(),
                    None,
                    Box::new(points(kit.write_fs_storage, Some(set), 0, 0)),
                )
            }
            Write::VertexStorage => {
                let set = storage_set(&kit.write_vs_storage);
                self.render(
                    ctx,
                    s,
                    scratch(),
                    None,
                    Box::new(points(kit.write_vs_storage, Some(set), 0, 0)),
                )
            }
            _ => self.write_command(kit, s, w),
        }
    }

    /// The transfer and compute writes' passes.
    fn write_command<'k>(&self, kit: &'k Kit, s: &PassSpec, w: Write) -> Box<dyn Pass + 'k> {
        let src = Bind::storage;
        let first = self.content[0];
        let data = self.get(Slot::Data).clone();
        let storage_set = |p: &Prog| {
            kit.set(
                p,
                &[
                    src(self.buffer_of(Slot::Src)),
                    src(self.buffer_of(Slot::Data)),
                ],
            )
        };
        match w {
            Write::CopyBuffer => {
                let (a, b) = (self.buffer_of(Slot::Src), self.buffer_of(Slot::Data));
                let region = vk::BufferCopy {
                    src_offset: 0,
                    dst_offset: 0,
                    size: (WORDS * 4) as u64,
                };
                // SAFETY: recording; both buffers declared (copy source, copy destination).
                self.step(s, move |r| unsafe {
                    r.device().cmd_copy_buffer(r.cmd(), a, b, &[region])
                })
            }
            Write::FillBuffer => {
                let b = self.buffer_of(Slot::Data);
                // SAFETY: recording; the buffer is declared as a transfer destination.
                self.step(s, move |r| unsafe {
                    r.device()
                        .cmd_fill_buffer(r.cmd(), b, 0, vk::WHOLE_SIZE, first)
                })
            }
            Write::ComputeBuffer => {
                let (prog, set) = (kit.copy, storage_set(&kit.copy));
                self.step(s, move |r| {
                    bind(r, &prog, Some(set), 0, 0);
                    // SAFETY: recording, with the pipeline and set bound; one group of 64.
                    unsafe { r.device().cmd_dispatch(r.cmd(), 1, 1, 1) };
                })
            }
            Write::CopyImage => {
                let (a, img) = (self.buffer_of(Slot::Src), data.clone());
                let region = vk::BufferImageCopy {
                    image_subresource: layers(vk::ImageAspectFlags::COLOR),
                    image_extent: vk::Extent3D {
                        width: SIDE,
                        height: SIDE,
                        depth: 1,
                    },
                    ..Default::default()
                };
                self.step(s, move |r| {
                    let dst = match &img {
                        Res::Image(i) => i.handle(),
                        Res::Buffer(_) => unreachable!(),
                    };
                    // SAFETY: recording; the image is declared as a copy destination
                    // (TRANSFER_DST_OPTIMAL), the buffer as a copy source.
                    unsafe {
                        r.device().cmd_copy_buffer_to_image(
                            r.cmd(),
                            a,
                            dst,
                            vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                            &[region],
                        )
                    };
                })
            }
            Write::ClearImage => {
                let img = self.image_of(Slot::Data).handle();
                let value = vk::ClearColorValue {
                    float32: unpack(first),
                };
                // SAFETY: recording; the image is declared as a clear's destination.
                self.step(s, move |r| unsafe {
                    r.device().cmd_clear_color_image(
                        r.cmd(),
                        img,
                        vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                        &value,
                        &[whole_color()],
                    )
                })
            }
            Write::ComputeImage => {
                let view = kit.view(&self.image_of(Slot::Data));
                let prog = kit.write_image;
                let set = kit.set(
                    &prog,
                    &[src(self.buffer_of(Slot::Src)), Bind::storage_image(view)],
                );
                self.step(s, move |r| {
                    bind(r, &prog, Some(set), 0, 0);
                    // SAFETY: recording, with the pipeline and set bound; one group of 8×8.
                    unsafe { r.device().cmd_dispatch(r.cmd(), 1, 1, 1) };
                })
            }
            _ => unreachable!("{w:?} is drawn"),
        }
    }

    /// The read's pass.
    pub(super) fn read<'k>(
        &self,
        ctx: &Context,
        kit: &'k Kit,
        s: &PassSpec,
        rd: Read,
    ) -> Box<dyn Pass + 'k> {
        if self.pair.kind() == Kind::Stencil {
            return self.stencil_read(ctx, kit, s, rd);
        }
        let access = rd.access(self.pair.kind());
        match rd.output() {
            Output::Compute if rd == Read::IndirectDispatch => {
                let (prog, args) = (kit.cs_dispatch, self.buffer_of(Slot::Data));
                let set = kit.set(&prog, &[Bind::storage(self.buffer_of(Slot::Readback))]);
                return self.step(s, move |r| {
                    bind(r, &prog, Some(set), 0, 0);
                    // SAFETY: recording; the arguments are declared as an indirect buffer.
                    unsafe { r.device().cmd_dispatch_indirect(r.cmd(), args, 0) };
                });
            }
            Output::Compute => return self.compute_read(kit, s, Slot::Readback, access),
            Output::Direct => return self.copy_read(s),
            Output::Image(_) if rd == Read::Blit => return self.blit(s),
            Output::Image(_) => {}
        }
        let out = self.image_of(Slot::Out);
        if rd == Read::DepthTest {
            let t = ColorTarget::clear(out, [0.0; 4]);
            let d = DepthTarget::read_only(self.image_of(Slot::Data));
            let prog = kit.depth_count;
            let draw = move |r: &Recorder<'_>| {
                bind(r, &prog, None, 0, 0);
                // SAFETY: recording inside the rendering the pipeline was made for.
                unsafe { r.device().cmd_draw(r.cmd(), 3, DEPTH_STEPS, 0, 0) };
            };
            return self.render(ctx, s, vec![t], Some(d), Box::new(draw));
        }
        self.draw_read(ctx, kit, s, rd, out)
    }

    /// A draw that reads the data, one point per word, into the r32ui result image `out`.
    fn draw_read<'k>(
        &self,
        ctx: &Context,
        kit: &'k Kit,
        s: &PassSpec,
        rd: Read,
        out: std::sync::Arc<vk_baton::StImage>,
    ) -> Box<dyn Pass + 'k> {
        let access = rd.access(self.pair.kind());
        let depth = u32::from(self.pair.kind() == Kind::Depth);
        let targets = vec![ColorTarget::clear_value(out, ZERO)];
        let data = self.get(Slot::Data).clone();
        let buffer = |b: Bind, p: &Prog| Some(kit.set(p, &[b]));
        let image = |sampled: bool, p: &Prog| {
            let view = kit.view(&self.image_of(Slot::Data));
            let b = if sampled {
                Bind::sampled(view, access.layout)
            } else {
                Bind::storage_image(view)
            };
            Some(kit.set(p, &[b]))
        };
        let is_buffer = matches!(data, Res::Buffer(_));
        let handle = if is_buffer {
            self.buffer_of(Slot::Data)
        } else {
            vk::Buffer::null()
        };
        let (prog, set, mode) = match rd {
            Read::VertexBuffer | Read::IndexBuffer | Read::IndirectDraw => (
                if rd == Read::VertexBuffer {
                    kit.vb
                } else {
                    kit.fixed
                },
                None,
                match rd {
                    Read::IndexBuffer => 1,
                    Read::IndirectDraw => 2,
                    _ => 0,
                },
            ),
            Read::UniformVertex => (kit.vs_ubo, buffer(Bind::uniform(handle), &kit.vs_ubo), 0),
            Read::UniformFragment => (kit.fs_ubo, buffer(Bind::uniform(handle), &kit.fs_ubo), 0),
            Read::StorageVertex if is_buffer => {
                (kit.vs_ssbo, buffer(Bind::storage(handle), &kit.vs_ssbo), 0)
            }
            Read::StorageFragment if is_buffer => {
                (kit.fs_ssbo, buffer(Bind::storage(handle), &kit.fs_ssbo), 0)
            }
            Read::StorageVertex => (kit.vs_storage, image(false, &kit.vs_storage), 0),
            Read::StorageFragment => (kit.fs_storage, image(false, &kit.fs_storage), 0),
            Read::SampledVertex => (kit.vs_sampled, image(true, &kit.vs_sampled), 0),
            Read::SampledFragment => (kit.fs_sampled, image(true, &kit.fs_sampled), 0),
            _ => unreachable!("{rd:?} is not a draw"),
        };
        let draw = move |r: &Recorder<'_>| {
            bind(r, &prog, set, mode, depth);
            let (d, c) = (r.device(), r.cmd());
            // SAFETY: recording inside the rendering the pipeline was made for; the buffer is
            // declared with the access of its use here.
            unsafe {
                match rd {
                    Read::VertexBuffer => {
                        d.cmd_bind_vertex_buffers(c, 0, &[handle], &[0]);
                        d.cmd_draw(c, WORDS as u32, 1, 0, 0);
                    }
                    Read::IndexBuffer => {
                        d.cmd_bind_index_buffer(c, handle, 0, vk::IndexType::UINT32);
                        d.cmd_draw_indexed(c, WORDS as u32, 1, 0, 0, 0);
                    }
                    Read::IndirectDraw => d.cmd_draw_indirect(c, handle, 0, 1, 16),
                    _ => d.cmd_draw(c, WORDS as u32, 1, 0, 0),
                }
            }
        };
        self.render(ctx, s, targets, None, Box::new(draw))
    }

    /// The copy of the data into the readback buffer.
    fn copy_read<'k>(&self, s: &PassSpec) -> Box<dyn Pass + 'k> {
        let dst = match self.get(Slot::Readback) {
            Res::Buffer(b) => b.clone(),
            Res::Image(_) => unreachable!(),
        };
        match self.get(Slot::Data).clone() {
            Res::Buffer(b) => {
                let region = vk::BufferCopy {
                    src_offset: 0,
                    dst_offset: 0,
                    size: (WORDS * 4) as u64,
                };
                // SAFETY: recording; both buffers declared (copy source, copy destination).
                self.step(s, move |r| unsafe {
                    r.device()
                        .cmd_copy_buffer(r.cmd(), b.handle(), dst.handle(), &[region])
                })
            }
            Res::Image(i) => self.step(s, move |r| copy_to_buffer(r, &i, &dst)),
        }
    }

    /// The blit of the data into the result image.
    fn blit<'k>(&self, s: &PassSpec) -> Box<dyn Pass + 'k> {
        let (src, dst) = (
            self.image_of(Slot::Data).handle(),
            self.image_of(Slot::Out).handle(),
        );
        let corner = vk::Offset3D {
            x: SIDE as i32,
            y: SIDE as i32,
            z: 1,
        };
        let region = vk::ImageBlit {
            src_subresource: layers(vk::ImageAspectFlags::COLOR),
            src_offsets: [vk::Offset3D::default(), corner],
            dst_subresource: layers(vk::ImageAspectFlags::COLOR),
            dst_offsets: [vk::Offset3D::default(), corner],
        };
        // SAFETY: recording; the images are declared as the blit's source and destination.
        self.step(s, move |r| unsafe {
            r.device().cmd_blit_image(
                r.cmd(),
                src,
                vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                dst,
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                &[region],
                vk::Filter::NEAREST,
            )
        })
    }
}
