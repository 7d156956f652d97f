//! A case on the GPU: its resources, its passes built from their specs (`cases.rs`), and the
//! check of what came back.

use super::cases::*;
use super::kit::{bind, Bind, Kit};
use std::collections::HashMap;
use std::sync::Arc;
use vk_baton::ash::vk;
use vk_baton::{Access, BufferDesc, Declare, ImageDesc, Pass, Recorder, StBuffer, StImage};
use vk_baton_context::Context;
use vk_baton_passes::render::{ColorTarget, DepthTarget, Render};

/// A resource of a case.
#[derive(Clone)]
pub enum Res {
    Buffer(Arc<StBuffer>),
    Image(Arc<StImage>),
}

impl Res {
    fn buffer(&self) -> &Arc<StBuffer> {
        match self {
            Res::Buffer(b) => b,
            Res::Image(i) => panic!("`{}` is an image", i.name()),
        }
    }
    fn image(&self) -> &Arc<StImage> {
        match self {
            Res::Image(i) => i,
            Res::Buffer(b) => panic!("`{}` is a buffer", b.name()),
        }
    }
}

/// A case's resources and the data it wrote.
pub struct Case {
    pub pair: Pair,
    pub res: HashMap<Slot, Res>,
    /// The frame's source words, and what the data holds after the write.
    pub src: Vec<u32>,
    pub content: Vec<u32>,
}

fn bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

impl Case {
    /// The case's resources (`families`: CONCURRENT sharing among them, if given), the
    /// source and the dispatch's readback written by the host.
    pub fn new(
        ctx: &Context,
        pair: Pair,
        middle: bool,
        families: Option<&[u32]>,
        frame: u32,
    ) -> Case {
        let src = source(&pair, frame);
        let mut res = HashMap::new();
        for slot in slots(&pair, middle) {
            let name = format!("#{} {slot:?}", pair.index);
            let r = if is_buffer(&pair, slot) {
                let usage = buffer_usage(slot);
                let size = (WORDS * 4) as u64;
                let mut desc = match slot {
                    Slot::Src => BufferDesc::upload(size, usage),
                    Slot::Readback | Slot::MidReadback => BufferDesc::readback(size, usage),
                    _ => BufferDesc::new(size, usage),
                };
                if let (Some(f), Slot::Data) = (families, slot) {
                    desc = desc.concurrent(f);
                }
                Res::Buffer(ctx.buffer(desc, &name).expect("buffer"))
            } else {
                let (format, usage) = image_desc(&pair, slot);
                let mut desc = ImageDesc::new_2d(SIDE, SIDE, format, usage);
                if slot == Slot::Msaa {
                    desc = desc.samples(vk::SampleCountFlags::TYPE_4);
                }
                if let (Some(f), Slot::Data) = (families, slot) {
                    desc = desc.concurrent(f);
                }
                Res::Image(ctx.image(desc, &name).expect("image"))
            };
            res.insert(slot, r);
        }
        let mut case = Case {
            pair,
            res,
            content: content(&pair, &src),
            src,
        };
        case.reset(frame);
        case
    }

    /// Takes the frame's data: writes the source, zeroes the readback (the dispatch writes
    /// part of it).
    pub fn reset(&mut self, frame: u32) {
        self.src = source(&self.pair, frame);
        self.content = content(&self.pair, &self.src);
        if let Some(r) = self.res.get(&Slot::Src) {
            r.buffer()
                .write(0, &bytes(&self.src))
                .expect("write the source");
        }
        self.res[&Slot::Readback]
            .buffer()
            .write(0, &[0; WORDS * 4])
            .expect("zero the readback");
    }

    pub(super) fn get(&self, s: Slot) -> &Res {
        &self.res[&s]
    }

    /// What came back, against the model: `None` when right.
    pub fn check(&self) -> Option<String> {
        let content = &self.content;
        let read = |s: Slot| {
            let mut out = vec![0u8; WORDS * 4];
            self.get(s).buffer().read(0, &mut out).expect("read back");
            out.chunks(4)
                .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
                .collect::<Vec<u32>>()
        };
        let mut wrong = Vec::new();
        let mut compare = |what: &str, got: Vec<u32>, want: Vec<u32>| {
            if let Some(i) = (0..WORDS).find(|&i| got[i] != want[i]) {
                let n = (0..WORDS).filter(|&i| got[i] != want[i]).count();
                wrong.push(format!(
                    "{what}: {n} of {WORDS} words wrong, the first, #{i}: {:#010x}, expected {:#010x}",
                    got[i], want[i]
                ));
            }
        };
        compare("read", read(Slot::Readback), expected(&self.pair, content));
        // The middle read returns the data's words (depth and stencil together for the
        // stencil row: `matrix_cs_ds_read.comp`).
        if self.res.contains_key(&Slot::MidReadback) {
            compare(
                "middle compute read",
                read(Slot::MidReadback),
                content.clone(),
            );
        }
        (!wrong.is_empty()).then(|| {
            format!(
                "{} #{}: {}",
                self.pair.name(),
                self.pair.index,
                wrong.join("; ")
            )
        })
    }
}

/// A pass that declares its spec's uses and records a closure.
pub(super) struct Step<'k> {
    uses: Vec<(Res, UseSpec)>,
    rec: Box<dyn FnMut(&Recorder<'_>) + 'k>,
}

/// Declares `u` of `r`, narrowed to its aspect (images) and discarding where it says so.
fn declare_use(d: &mut Declare<'_>, r: &Res, u: &UseSpec) {
    match r {
        Res::Buffer(b) => {
            let used = d.uses(b, u.access);
            if u.discard {
                used.discard();
            }
        }
        Res::Image(i) => {
            let used = d.uses(i, u.access).aspect(u.aspect);
            if u.discard {
                used.discard();
            }
        }
    }
}

impl Pass for Step<'_> {
    fn declare(&self, d: &mut Declare<'_>) {
        for (r, u) in &self.uses {
            declare_use(d, r, u);
        }
    }
    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        (self.rec)(r);
        Ok(())
    }
}

pub(super) fn area() -> vk::Rect2D {
    vk::Rect2D {
        offset: vk::Offset2D::default(),
        extent: vk::Extent2D {
            width: SIDE,
            height: SIDE,
        },
    }
}

/// A stock pass with uses declared beside its own (reads narrowed to an aspect).
struct Beside<'k> {
    pass: Box<dyn Pass + 'k>,
    uses: Vec<(Res, UseSpec)>,
}

impl Pass for Beside<'_> {
    fn declare(&self, d: &mut Declare<'_>) {
        self.pass.declare(d);
        for (r, u) in &self.uses {
            declare_use(d, r, u);
        }
    }
    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        self.pass.record(r)
    }
}

/// Whether a use is one of a `Render`'s targets (declared by the pass itself).
fn is_target(a: Access) -> bool {
    [
        Access::COLOR_ATTACHMENT_WRITE,
        Access::COLOR_ATTACHMENT_READ_WRITE,
        Access::DEPTH_ATTACHMENT_WRITE,
        Access::DEPTH_ATTACHMENT_READ,
    ]
    .contains(&a)
}

/// A draw's commands, given the recorder.
pub(super) type Draw<'k> = Box<dyn FnMut(&Recorder<'_>) + 'k>;

impl Case {
    /// A stock `Render` pass on these targets, declaring the spec's other uses with `reads`.
    pub(super) fn render<'k>(
        &self,
        ctx: &Context,
        s: &PassSpec,
        colors: Vec<ColorTarget>,
        depth: Option<DepthTarget>,
        mut draw: Draw<'k>,
    ) -> Box<dyn Pass + 'k> {
        let mut pass = Render::new(ctx.device(), area(), colors, depth, move |r| {
            draw(r);
            Ok(())
        })
        .expect("render pass");
        let mut narrowed = Vec::new();
        for u in &s.uses {
            if is_target(u.access) {
                continue;
            }
            assert!(!u.discard, "Render::reads declares no discard");
            // `Render::reads_image` declares every aspect: a read of one is declared beside.
            if !u.aspect.is_empty() {
                narrowed.push((self.get(u.slot).clone(), *u));
                continue;
            }
            pass = match self.get(u.slot) {
                Res::Buffer(b) => pass.reads(b, u.access),
                Res::Image(i) => pass
                    .reads_image(i, u.access)
                    .expect("a sampled or storage read"),
            };
        }
        Box::new(Beside {
            pass: Box::new(pass),
            uses: narrowed,
        })
    }

    pub(super) fn step<'k>(
        &self,
        s: &PassSpec,
        rec: impl FnMut(&Recorder<'_>) + 'k,
    ) -> Box<dyn Pass + 'k> {
        let uses = s
            .uses
            .iter()
            .map(|u| (self.get(u.slot).clone(), *u))
            .collect();
        Box::new(Step {
            uses,
            rec: Box::new(rec),
        })
    }

    /// The pass `s` of this case.
    pub fn pass<'k>(&self, ctx: &Context, kit: &'k Kit, s: &PassSpec) -> Box<dyn Pass + 'k> {
        match s.rec {
            Rec::Base if self.pair.kind() == Kind::Stencil => self.stencil_base(ctx, kit, s),
            Rec::Base => {
                let c = unpack(clear_color(&self.pair));
                let t = ColorTarget::clear(self.get(Slot::Data).image().clone(), c);
                self.render(ctx, s, vec![t], None, Box::new(|_| {}))
            }
            Rec::Write(w) => self.write(ctx, kit, s, w),
            Rec::Middle if self.pair.kind() == Kind::Stencil => self.stencil_middle(kit, s),
            Rec::Middle => {
                self.compute_read(kit, s, Slot::MidReadback, middle_access(self.pair.kind()))
            }
            Rec::Read(r) => self.read(ctx, kit, s, r),
            Rec::Readback => {
                let (img, dst) = (
                    self.get(Slot::Out).image().clone(),
                    self.get(Slot::Readback).buffer().clone(),
                );
                self.step(s, move |r| copy_to_buffer(r, &img, &dst))
            }
            Rec::Host(_) => self.step(s, |_| {}),
        }
    }

    /// A compute shader's read of the data into `dst` (storage or sampled).
    pub(super) fn compute_read<'k>(
        &self,
        kit: &'k Kit,
        s: &PassSpec,
        dst: Slot,
        a: Access,
    ) -> Box<dyn Pass + 'k> {
        let out = Bind::storage(self.get(dst).buffer().handle());
        let depth = u32::from(self.pair.kind() == Kind::Depth);
        let (prog, set) = match self.get(Slot::Data) {
            Res::Buffer(b) => (
                kit.copy,
                kit.set(&kit.copy, &[Bind::storage(b.handle()), out]),
            ),
            Res::Image(i) if a == Access::COMPUTE_SHADER_READ => (
                kit.cs_storage,
                kit.set(&kit.cs_storage, &[Bind::storage_image(kit.view(i)), out]),
            ),
            Res::Image(i) => (
                kit.cs_sampled,
                kit.set(
                    &kit.cs_sampled,
                    &[Bind::sampled(kit.view(i), a.layout), out],
                ),
            ),
        };
        self.step(s, move |r| {
            bind(r, &prog, Some(set), 0, depth);
            // SAFETY: recording, with the pipeline and set bound above; one workgroup covers
            // the 64 words or 8×8 texels.
            unsafe { r.device().cmd_dispatch(r.cmd(), 1, 1, 1) };
        })
    }
}

/// An RGBA8 word as the float colour that stores it exactly.
pub fn unpack(w: u32) -> [f32; 4] {
    w.to_le_bytes().map(|b| b as f32 / 255.0)
}

/// `vkCmdCopyImageToBuffer` of all of an 8×8 image (its aspect) into `dst`.
pub fn copy_to_buffer(r: &Recorder<'_>, img: &StImage, dst: &StBuffer) {
    let region = vk::BufferImageCopy {
        image_subresource: vk::ImageSubresourceLayers {
            aspect_mask: img.desc().aspect(),
            mip_level: 0,
            base_array_layer: 0,
            layer_count: 1,
        },
        image_extent: img.desc().extent,
        ..Default::default()
    };
    // SAFETY: recording; the pass declared the image as a copy source (TRANSFER_SRC_OPTIMAL)
    // and the buffer as a copy destination.
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
