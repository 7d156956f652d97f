//! A CPU model of what the passes of a graph compute, to compare schedules by their results.
//!
//! Every cell of every resource (an image's (mip, layer), a buffer's byte) holds a 64-bit
//! value. A pass hashes its identity with the values of every cell it reads into a digest;
//! each cell it writes becomes a hash of that digest, the use, the cell and (unless the use
//! discards) the cell's old value, since a write need not cover every byte of its range. Two
//! orders of the passes give the same contents exactly when every pair that one of them
//! writes where the other reads or writes keeps its order.

use vk_baton::ash::vk;
use vk_baton::plan::{PlanInput, ResourceDecl, ResourceKind, UseDecl};
use vk_baton::SubRange;

/// The contents of every cell of every resource.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Contents(pub Vec<Vec<u64>>);

fn mix(a: u64, b: u64) -> u64 {
    // splitmix64 of the pair.
    let mut z = a ^ b.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn hash(parts: &[u64]) -> u64 {
    parts.iter().fold(0x5EED, |h, &p| mix(h, p))
}

/// The cells a use covers: an image's `(mip * layers + layer) * planes + plane`, where an
/// image with depth and stencil has two planes (depth, stencil) and a use may name one.
pub fn cells(r: &ResourceDecl, u: &UseDecl) -> Vec<usize> {
    match (r.kind, u.range.unwrap_or(r.kind.whole())) {
        (ResourceKind::Image { layers, aspect, .. }, SubRange::Image(i)) => {
            let depth_stencil = vk::ImageAspectFlags::DEPTH | vk::ImageAspectFlags::STENCIL;
            let planes: &[u32] = match (aspect == depth_stencil, u.aspect) {
                (false, _) => &[0],
                (true, a) if a == vk::ImageAspectFlags::DEPTH => &[0],
                (true, a) if a == vk::ImageAspectFlags::STENCIL => &[1],
                (true, _) => &[0, 1],
            };
            let count = if aspect == depth_stencil { 2 } else { 1 };
            let mut out = vec![];
            for m in i.base_mip..i.base_mip + i.mip_count {
                for l in i.base_layer..i.base_layer + i.layer_count {
                    for &p in planes {
                        out.push(((m * layers + l) * count + p) as usize);
                    }
                }
            }
            out
        }
        (ResourceKind::Buffer { .. }, SubRange::Buffer(b)) => {
            (b.offset as usize..(b.offset + b.size) as usize).collect()
        }
        _ => panic!("a range of another kind than its resource"),
    }
}

/// Whether a use reads: it has an access bit that is not a write, or none at all.
fn reads(u: &UseDecl) -> bool {
    let a = u.access.access;
    a.is_empty() || a != vk_baton::access::write_bits_of(a)
}

impl Contents {
    /// Every cell of every resource a distinct value.
    pub fn new(resources: &[ResourceDecl]) -> Contents {
        Contents(
            resources
                .iter()
                .enumerate()
                .map(|(r, d)| {
                    (0..d.kind.cells())
                        .map(|c| hash(&[1, r as u64, c]))
                        .collect()
                })
                .collect(),
        )
    }

    /// Runs graph number `graph` of `input`'s passes in `order`. Transient resources start
    /// each graph with contents of their own (what a fresh allocation holds), and a guarded
    /// binary wait hands its images back with the presentation engine's.
    pub fn run(&mut self, graph: u64, input: &PlanInput, order: &[usize]) {
        for (r, d) in input.resources.iter().enumerate() {
            if d.transient.is_some() {
                for (c, v) in self.0[r].iter_mut().enumerate() {
                    *v = hash(&[2, graph, r as u64, c as u64]);
                }
            }
        }
        for &i in order {
            let pass = &input.passes[i];
            for w in &pass.waits {
                for &g in &w.guards {
                    for (c, v) in self.0[g].iter_mut().enumerate() {
                        *v = hash(&[3, graph, i as u64, c as u64]);
                    }
                }
            }
            let mut digest = hash(&[4, graph, i as u64]);
            for u in pass.uses.iter().filter(|u| reads(u)) {
                for c in cells(&input.resources[u.resource], u) {
                    digest = mix(digest, self.0[u.resource][c]);
                }
            }
            for (k, u) in pass.uses.iter().enumerate() {
                if !u.access.is_write() {
                    continue;
                }
                for c in cells(&input.resources[u.resource], u) {
                    let v = &mut self.0[u.resource][c];
                    let new = hash(&[digest, k as u64, c as u64]);
                    *v = if u.discard { new } else { mix(new, *v) };
                }
            }
        }
    }
}
