//! Host access to mapped buffers: reads, writes, and the flushes and invalidates that
//! non-coherent memory needs, each limited to the buffer's own bytes.
//!
//! gpu-allocator places many buffers in one `VkDeviceMemory`. Flushing or invalidating the
//! whole memory object would touch the neighbours too, and an invalidate discards host writes
//! a neighbour has not flushed yet. So a buffer covers only its own bytes, rounded outward to
//! `nonCoherentAtomSize` as `VkMappedMemoryRange` requires (VUID-VkMappedMemoryRange-offset-00687,
//! -size-01390), and the buffers the library allocates are aligned and padded to the atom, so
//! that no two of them share one. HOST_COHERENT memory is never flushed or invalidated.

use ash::vk;
use std::ops::Range;
use std::ptr::NonNull;

/// A multiple of every device's `nonCoherentAtomSize`: the spec's required limits cap it at
/// 256, and devices report powers of two. [`StBuffer::new`](crate::StBuffer::new) is given no
/// physical device to ask, so the buffers it allocates are aligned and padded to this.
pub(crate) const MAX_NON_COHERENT_ATOM_SIZE: u64 = 256;

/// Where a mapped buffer lives in its memory object, and which bytes of it
/// [`StBuffer::flush`](crate::StBuffer::flush) and
/// [`StBuffer::invalidate`](crate::StBuffer::invalidate) cover.
///
/// ```no_run
/// # fn f(a: &vk_baton::StBuffer, b: &vk_baton::StBuffer) {
/// let (a, b) = (a.host_memory().unwrap(), b.host_memory().unwrap());
/// if a.memory == b.memory {
///     // Two buffers in one memory object: their flushes never overlap.
///     assert!(a.atom_range.end <= b.atom_range.start || b.atom_range.end <= a.atom_range.start);
/// }
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct HostMemory {
    /// The memory object the buffer is bound to.
    pub memory: vk::DeviceMemory,
    /// Where the buffer is bound in it.
    pub offset: u64,
    /// Whether the memory is HOST_COHERENT: then nothing is flushed or invalidated.
    pub coherent: bool,
    /// The buffer's bytes in `memory`, rounded outward to the non-coherent atom size and
    /// clamped to the end of `memory`: what a flush or invalidate covers on non-coherent
    /// memory.
    pub atom_range: Range<u64>,
}

/// The host mapping of a buffer the app created and bound itself, for
/// [`StBuffer::from_raw_mapped`](crate::StBuffer::from_raw_mapped).
///
/// ```no_run
/// # fn f(memory: ash::vk::DeviceMemory, ptr: std::ptr::NonNull<u8>, atom: u64) {
/// use vk_baton::HostMapping;
/// // The app bound the buffer at byte 512 of a 64 KiB non-coherent memory object that it
/// // mapped whole at `ptr`.
/// let m = HostMapping {
///     memory,
///     memory_size: 65536,
///     offset: 512,
///     // SAFETY: byte 512 lies inside the 64 KiB mapping.
///     ptr: unsafe { ptr.add(512) },
///     coherent: false,
///     non_coherent_atom_size: atom, // VkPhysicalDeviceLimits::nonCoherentAtomSize
/// };
/// # }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct HostMapping {
    /// The memory object the buffer is bound to.
    pub memory: vk::DeviceMemory,
    /// The memory object's size (`VkMemoryAllocateInfo::allocationSize`).
    pub memory_size: u64,
    /// The offset the buffer is bound at (`vkBindBufferMemory`).
    pub offset: u64,
    /// The buffer's first byte in the host mapping of `memory`.
    pub ptr: NonNull<u8>,
    /// Whether the memory type is HOST_COHERENT.
    pub coherent: bool,
    /// `VkPhysicalDeviceLimits::nonCoherentAtomSize`.
    pub non_coherent_atom_size: u64,
}

/// A buffer's mapping: where its bytes are on the host and in device memory.
pub(super) struct Mapped {
    pub(super) ptr: NonNull<u8>,
    pub(super) memory: HostMemory,
}

impl Mapped {
    /// The mapping of a buffer of `size` bytes bound at `offset` of `memory`.
    pub(super) fn new(
        ptr: NonNull<u8>,
        memory: vk::DeviceMemory,
        memory_size: u64,
        offset: u64,
        size: u64,
        coherent: bool,
        atom: u64,
    ) -> Self {
        Self {
            ptr,
            memory: HostMemory {
                memory,
                offset,
                coherent,
                atom_range: atom_range(offset, size, memory_size, atom),
            },
        }
    }
}

/// The bytes `offset..offset + size` of a memory object of `memory_size` bytes, rounded
/// outward to multiples of `atom` and clamped to the memory's end. The result satisfies
/// `VkMappedMemoryRange`'s rules: its start is a multiple of `atom`, and its length is one
/// too or it ends at the end of the memory. Expects `offset + size <= memory_size` and
/// `atom > 0` (checked where mappings are made).
pub(crate) fn atom_range(offset: u64, size: u64, memory_size: u64, atom: u64) -> Range<u64> {
    let atom = atom.max(1);
    let start = offset - offset % atom;
    let end = offset.saturating_add(size);
    let rounded = end.div_ceil(atom).saturating_mul(atom);
    start..rounded.min(memory_size)
}

/// The range to flush or invalidate for `m`, or `None` on coherent memory.
pub(crate) fn mapped_memory_range(m: &HostMemory) -> Option<vk::MappedMemoryRange<'static>> {
    (!m.coherent).then(|| {
        vk::MappedMemoryRange::default()
            .memory(m.memory)
            .offset(m.atom_range.start)
            .size(m.atom_range.end - m.atom_range.start)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_ranges_are_kept() {
        assert_eq!(atom_range(0, 256, 1 << 20, 64), 0..256);
        assert_eq!(atom_range(512, 128, 1 << 20, 64), 512..640);
    }

    #[test]
    fn ranges_round_outward_to_the_atom() {
        // Zero offset, a size that is not a multiple of the atom.
        assert_eq!(atom_range(0, 100, 1 << 20, 64), 0..128);
        // Both ends inside atoms.
        assert_eq!(atom_range(100, 100, 1 << 20, 64), 64..256);
        // A non-power-of-two atom still gives multiples of it.
        assert_eq!(atom_range(100, 10, 1 << 20, 48), 96..144);
    }

    #[test]
    fn ranges_are_clamped_to_the_end_of_the_memory() {
        // The buffer ends 36 bytes into the last atom, at the memory's end: the range stops
        // there (offset + size == memory size is allowed).
        assert_eq!(atom_range(4000, 132, 4132, 64), 3968..4132);
        // Ending inside the last partial atom, short of the memory's end.
        assert_eq!(atom_range(4000, 120, 4132, 64), 3968..4132);
        // A memory object that is one buffer (a dedicated block).
        assert_eq!(atom_range(0, 100, 100, 256), 0..100);
    }

    #[test]
    fn neighbours_padded_to_the_atom_never_overlap() {
        // Two 100-byte buffers, each at a multiple of the atom as the library allocates them.
        let a = atom_range(0, 100, 1 << 20, MAX_NON_COHERENT_ATOM_SIZE);
        let b = atom_range(256, 100, 1 << 20, MAX_NON_COHERENT_ATOM_SIZE);
        assert_eq!((a, b), (0..256, 256..512));
    }

    #[test]
    fn every_range_meets_the_vulkan_rules() {
        for atom in [1u64, 4, 64, 256] {
            for memory_size in [atom * 16, atom * 16 + 36] {
                for offset in (0..memory_size).step_by(7) {
                    for size in [1, 3, atom, atom + 1, 2 * atom] {
                        if offset + size > memory_size {
                            continue;
                        }
                        let r = atom_range(offset, size, memory_size, atom);
                        assert!(r.start <= offset && offset + size <= r.end, "{r:?}");
                        assert_eq!(r.start % atom, 0);
                        assert!((r.end - r.start) % atom == 0 || r.end == memory_size);
                        assert!(r.end <= memory_size);
                        // No wider than needed: less than one atom on each side.
                        assert!(offset - r.start < atom && r.end - (offset + size) < atom);
                    }
                }
            }
        }
    }

    #[test]
    fn coherent_memory_is_never_flushed() {
        let m = HostMemory {
            memory: vk::DeviceMemory::null(),
            offset: 100,
            coherent: true,
            atom_range: 64..256,
        };
        assert!(mapped_memory_range(&m).is_none());
        let r = mapped_memory_range(&HostMemory {
            coherent: false,
            ..m
        })
        .unwrap();
        assert_eq!((r.offset, r.size), (64, 192));
    }
}
