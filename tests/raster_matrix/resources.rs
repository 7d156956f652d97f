//! A case's resources: which slots it uses, and each one's usage (and format).

use super::cases::*;
use vk_baton::ash::vk;

/// The slots a case uses.
pub fn slots(p: &Pair, middle: bool) -> Vec<Slot> {
    let mut all: Vec<PassSpec> = write_passes(p);
    all.extend(read_passes(p));
    if middle {
        all.extend(middle_passes(p));
    }
    let mut out: Vec<Slot> = Vec::new();
    for s in all.iter().flat_map(|s| s.uses.iter().map(|u| u.slot)) {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// Usage flags of a buffer slot.
pub fn buffer_usage(s: Slot) -> vk::BufferUsageFlags {
    use vk::BufferUsageFlags as U;
    match s {
        Slot::Src => U::STORAGE_BUFFER | U::TRANSFER_SRC,
        Slot::Readback | Slot::MidReadback => U::STORAGE_BUFFER | U::TRANSFER_DST,
        _ => {
            U::VERTEX_BUFFER
                | U::INDEX_BUFFER
                | U::INDIRECT_BUFFER
                | U::UNIFORM_BUFFER
                | U::STORAGE_BUFFER
                | U::TRANSFER_SRC
                | U::TRANSFER_DST
        }
    }
}

/// Format and usage of an image slot.
pub fn image_desc(p: &Pair, s: Slot) -> (vk::Format, vk::ImageUsageFlags) {
    use vk::ImageUsageFlags as U;
    let out = U::COLOR_ATTACHMENT | U::TRANSFER_SRC | U::TRANSFER_DST;
    match (s, p.kind()) {
        (Slot::Data, Kind::Depth) => (
            DEPTH,
            U::DEPTH_STENCIL_ATTACHMENT | U::SAMPLED | U::TRANSFER_SRC,
        ),
        (Slot::Data, Kind::Stencil) => (
            DEPTH_STENCIL,
            U::DEPTH_STENCIL_ATTACHMENT | U::SAMPLED | U::TRANSFER_SRC,
        ),
        (Slot::Data, _) => (COLOR, out | U::SAMPLED | U::STORAGE),
        (Slot::Msaa, _) => (COLOR, U::COLOR_ATTACHMENT),
        (Slot::Scratch, _) => (RESULT, U::COLOR_ATTACHMENT),
        (Slot::Out, _) => match p.read.output() {
            Output::Image(f) => (f, out),
            _ => unreachable!("no result image"),
        },
        _ => unreachable!("{s:?} is a buffer"),
    }
}

/// Whether the slot is a buffer.
pub fn is_buffer(p: &Pair, s: Slot) -> bool {
    match s {
        Slot::Src | Slot::Readback | Slot::MidReadback => true,
        Slot::Data => p.kind() == Kind::Buffer,
        _ => false,
    }
}
