//! What a stream moves: items (buffer pieces or RGBA8 images with full mip chains), grouped into
//! batches, with the host data they come from and the checksum each batch must give.

use std::collections::HashMap;
use vk_baton::ash::vk;

/// Host source buffers the items cycle through (item `i` comes from source `i % SOURCES`).
pub const SOURCES: usize = 4;

/// What one item is.
#[derive(Clone, Copy, Debug)]
pub enum Item {
    /// A piece of `bytes` bytes of a device buffer.
    Piece { bytes: u64 },
    /// A `size`×`size` RGBA8 image with `mips` levels.
    Image { size: u32, mips: u32 },
}

/// A stream: `count` items, `per_batch` of them per graph execution (or hand-written submit).
pub struct Workload {
    pub label: String,
    pub item: Item,
    pub count: usize,
    pub per_batch: usize,
    pub sources: Vec<Vec<u8>>,
    expected: HashMap<(usize, usize), u32>,
}

/// Word `j` of source `k`.
fn pattern(k: u32, j: u32) -> u32 {
    j.wrapping_mul(2_654_435_761) ^ k.wrapping_mul(0x0100_0193).wrapping_add(0x1234_5678)
}

/// The host's copy of `checksum.comp`, summed over every workgroup.
pub fn checksum(words: impl Iterator<Item = u32>) -> u32 {
    words.enumerate().fold(0u32, |s, (j, w)| {
        s.wrapping_add(w ^ (j as u32).wrapping_mul(0x9E37_79B9))
    })
}

/// The regions of every mip level of a `size`×`size` RGBA8 image packed from `base` (RGBA8
/// levels need no padding between them).
pub fn image_regions(size: u32, mips: u32, base: u64) -> Vec<vk::BufferImageCopy> {
    let mut offset = base;
    (0..mips)
        .map(|level| {
            let e = (size >> level).max(1);
            let r = vk::BufferImageCopy {
                buffer_offset: offset,
                buffer_row_length: 0,
                buffer_image_height: 0,
                image_subresource: vk::ImageSubresourceLayers {
                    aspect_mask: vk::ImageAspectFlags::COLOR,
                    mip_level: level,
                    base_array_layer: 0,
                    layer_count: 1,
                },
                image_offset: vk::Offset3D::default(),
                image_extent: vk::Extent3D {
                    width: e,
                    height: e,
                    depth: 1,
                },
            };
            offset += e as u64 * e as u64 * 4;
            r
        })
        .collect()
}

impl Item {
    /// Bytes of one item.
    pub fn bytes(&self) -> u64 {
        match *self {
            Item::Piece { bytes } => bytes,
            Item::Image { size, mips } => (0..mips)
                .map(|l| {
                    let e = (size >> l).max(1) as u64;
                    e * e * 4
                })
                .sum(),
        }
    }
}

impl Workload {
    /// `count` items, batched so that a batch carries about `batch_bytes` (at least one item).
    pub fn new(label: String, item: Item, count: usize, batch_bytes: u64) -> Self {
        let bytes = item.bytes();
        let per_batch = ((batch_bytes / bytes.max(1)) as usize).clamp(1, count.max(1));
        let sources = (0..SOURCES.min(count.max(1)) as u32)
            .map(|k| {
                (0..(bytes / 4) as u32)
                    .flat_map(|j| pattern(k, j).to_le_bytes())
                    .collect()
            })
            .collect();
        Self {
            label,
            item,
            count,
            per_batch,
            sources,
            expected: HashMap::new(),
        }
    }

    pub fn batches(&self) -> usize {
        self.count.div_ceil(self.per_batch)
    }

    /// The items of batch `b`; a timed run that goes round the stream more than once counts
    /// on, so batch `batches() + b` is batch `b` again.
    pub fn items(&self, b: usize) -> std::ops::Range<usize> {
        let b = b % self.batches();
        b * self.per_batch..((b + 1) * self.per_batch).min(self.count)
    }

    /// The host data of item `i`.
    pub fn source(&self, i: usize) -> &[u8] {
        &self.sources[i % self.sources.len()]
    }

    pub fn total_bytes(&self) -> u64 {
        self.item.bytes() * self.count as u64
    }

    /// Bytes of a full batch (what each device buffer in the rotation holds).
    pub fn batch_bytes(&self) -> u64 {
        self.item.bytes() * self.per_batch as u64
    }

    /// The checksum of batch `b`'s items laid end to end.
    pub fn expected(&mut self, b: usize) -> u32 {
        let items = self.items(b);
        let key = (items.start % self.sources.len(), items.len());
        if let Some(&v) = self.expected.get(&key) {
            return v;
        }
        let words = items.flat_map(|i| {
            self.source(i)
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        });
        let v = checksum(words);
        self.expected.insert(key, v);
        v
    }
}
