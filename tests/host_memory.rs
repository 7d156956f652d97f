//! Mapped buffers that share one `VkDeviceMemory` flush and invalidate only their own bytes.
//! Runs on lavapipe with validation; any message fails the test.
//!
//! Lavapipe's only memory type is HOST_COHERENT, so the app-bound buffers below declare
//! their memory non-coherent: flushing coherent memory is valid, so the non-coherent path
//! runs and the validation layer checks every `VkMappedMemoryRange` it makes.

mod common;

use common::*;
use std::ptr::NonNull;
use std::sync::Arc;
use vk_baton::ash::vk;
use vk_baton::{BufferDesc, Destroy, Error, HostMapping, ResourceState, StBuffer};
use vk_baton_context::Context;

const LEN: u64 = 100;

fn pattern(seed: u8) -> Vec<u8> {
    (0..LEN as u8).map(|i| i.wrapping_mul(31) ^ seed).collect()
}

fn atom_size(ctx: &Context) -> u64 {
    // SAFETY: a live instance and one of its physical devices.
    let props = unsafe {
        ctx.instance()
            .get_physical_device_properties(ctx.physical_device())
    };
    props.limits.non_coherent_atom_size
}

#[test]
fn library_buffers_share_a_memory_object_and_flush_apart() {
    let ctx = ctx();
    let desc = BufferDesc::upload(LEN, vk::BufferUsageFlags::TRANSFER_SRC);
    let a = ctx.buffer(desc.clone(), "a").unwrap();
    let b = ctx.buffer(desc, "b").unwrap();
    let (ma, mb) = (a.host_memory().unwrap(), b.host_memory().unwrap());
    // gpu-allocator puts both in one block: the case where whole-block flushes went wrong.
    assert_eq!(ma.memory, mb.memory);
    // Each covers its own 100 bytes rounded to 256 (the largest atom any device has), and
    // each allocation is padded to 256, so the two ranges never meet.
    for m in [ma, mb] {
        assert_eq!(m.offset % 256, 0, "{m:?}");
        assert_eq!(m.atom_range, m.offset..m.offset + 256, "{m:?}");
    }
    assert!(
        ma.atom_range.end <= mb.atom_range.start || mb.atom_range.end <= ma.atom_range.start,
        "{ma:?} {mb:?}"
    );
    a.write(0, &pattern(1)).unwrap();
    b.write(0, &pattern(2)).unwrap();
    a.flush().unwrap();
    a.invalidate().unwrap();
    let mut out = vec![0u8; LEN as usize];
    b.read(0, &mut out).unwrap();
    assert_eq!(out, pattern(2));
    a.read(0, &mut out).unwrap();
    assert_eq!(out, pattern(1));
    assert_clean(&ctx);
}

/// One host-visible memory object the test allocates, maps whole and binds buffers into.
struct AppMemory {
    device: vk_baton::ash::Device,
    memory: vk::DeviceMemory,
    size: u64,
    ptr: NonNull<u8>,
    buffers: Vec<vk::Buffer>,
}

/// The usage of the app's buffers.
const APP_USAGE: vk::BufferUsageFlags = vk::BufferUsageFlags::from_raw(
    vk::BufferUsageFlags::TRANSFER_SRC.as_raw() | vk::BufferUsageFlags::TRANSFER_DST.as_raw(),
);

/// What the device asks of a `LEN`-byte buffer (lavapipe: 100 bytes; NVIDIA: 112).
fn app_buffer_requirements(ctx: &Context) -> vk::MemoryRequirements {
    let info = vk::BufferCreateInfo::default().size(LEN).usage(APP_USAGE);
    // SAFETY: a valid create info; the probe buffer is destroyed right after the query.
    unsafe {
        let probe = ctx.device().create_buffer(&info, None).unwrap();
        let req = ctx.device().get_buffer_memory_requirements(probe);
        ctx.device().destroy_buffer(probe, None);
        req
    }
}

impl AppMemory {
    fn new(ctx: &Context, size: u64, type_bits: u32) -> AppMemory {
        // SAFETY: a live instance and one of its physical devices.
        let props = unsafe {
            ctx.instance()
                .get_physical_device_memory_properties(ctx.physical_device())
        };
        let type_index = (0..props.memory_type_count)
            .find(|&i| {
                type_bits & (1 << i) != 0
                    && props.memory_types[i as usize]
                        .property_flags
                        .contains(vk::MemoryPropertyFlags::HOST_VISIBLE)
            })
            .expect("a host-visible memory type");
        let info = vk::MemoryAllocateInfo::default()
            .allocation_size(size)
            .memory_type_index(type_index);
        // SAFETY: a valid allocate info; freed in Drop.
        let memory = unsafe { ctx.device().allocate_memory(&info, None) }.unwrap();
        // SAFETY: host-visible memory, mapped once, whole.
        let ptr = unsafe {
            ctx.device()
                .map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
        }
        .unwrap();
        AppMemory {
            device: ctx.device().clone(),
            memory,
            size,
            ptr: NonNull::new(ptr.cast()).unwrap(),
            buffers: Vec::new(),
        }
    }

    /// A `LEN`-byte buffer bound at `offset`, wrapped with its mapping.
    fn buffer(&mut self, offset: u64, atom: u64, name: &str) -> StBuffer {
        let usage = APP_USAGE;
        let info = vk::BufferCreateInfo::default().size(LEN).usage(usage);
        // SAFETY: a valid create info; destroyed in Drop, after the StBuffer (AppKeeps).
        let handle = unsafe { self.device.create_buffer(&info, None) }.unwrap();
        self.buffers.push(handle);
        // SAFETY: a live buffer.
        let req = unsafe { self.device.get_buffer_memory_requirements(handle) };
        assert_eq!(offset % req.alignment, 0, "{req:?}");
        assert!(offset + req.size <= self.size, "{req:?}");
        // SAFETY: the offset meets the requirements (checked above).
        unsafe { self.device.bind_buffer_memory(handle, self.memory, offset) }.unwrap();
        let mapping = HostMapping {
            memory: self.memory,
            memory_size: self.size,
            offset,
            // SAFETY: `offset` lies inside the mapping.
            ptr: unsafe { self.ptr.add(offset as usize) },
            // Declared non-coherent so that flushes and invalidates run (see the file's note).
            coherent: false,
            non_coherent_atom_size: atom,
        };
        let desc = BufferDesc::new(LEN, usage);
        let state = ResourceState::undefined();
        // SAFETY: bound at `offset` of memory that stays mapped whole until Drop, which runs
        // after the StBuffer is gone.
        unsafe {
            StBuffer::from_raw_mapped(
                &self.device,
                handle,
                desc,
                name,
                state,
                Destroy::AppKeeps,
                mapping,
            )
        }
        .unwrap()
    }
}

impl Drop for AppMemory {
    fn drop(&mut self) {
        // SAFETY: the wrapping StBuffers and every execution using them are gone (the tests
        // wait for their fences); the memory is freed after its buffers.
        unsafe {
            self.device.device_wait_idle().unwrap();
            for &b in &self.buffers {
                self.device.destroy_buffer(b, None);
            }
            self.device.unmap_memory(self.memory);
            self.device.free_memory(self.memory, None);
        }
    }
}

#[test]
fn app_buffers_in_one_memory_object_flush_only_their_own_bytes() {
    let ctx = ctx();
    let atom = atom_size(&ctx);
    // `b` ends exactly at the end of a memory object whose size is not a multiple of the
    // atom, so its range is clamped there; `a` starts at 0.
    let req = app_buffer_requirements(&ctx);
    let b_offset = 4 * atom.max(256).max(req.alignment);
    let mut mem = AppMemory::new(&ctx, b_offset + req.size, req.memory_type_bits);
    let mut a = mem.buffer(0, atom, "a");
    let mut b = mem.buffer(b_offset, atom, "b");
    assert_eq!(
        a.host_memory().unwrap().memory,
        b.host_memory().unwrap().memory
    );
    assert_eq!(
        a.host_memory().unwrap().atom_range,
        0..LEN.div_ceil(atom) * atom
    );
    assert_eq!(
        b.host_memory().unwrap().atom_range,
        b_offset..(b_offset + LEN).next_multiple_of(atom).min(mem.size)
    );

    // Write both through their maps, flush and invalidate only `a`.
    a.mapped_slice_mut().unwrap().copy_from_slice(&pattern(3));
    b.mapped_slice_mut().unwrap().copy_from_slice(&pattern(4));
    a.flush().unwrap();
    assert_eq!(a.mapped_slice().unwrap(), pattern(3));
    // `b`'s bytes, written but never flushed, are intact.
    // SAFETY: the mapping is live and nothing else writes these bytes now.
    let raw_b = unsafe {
        std::slice::from_raw_parts(mem.ptr.as_ptr().add(b_offset as usize), LEN as usize)
    };
    assert_eq!(raw_b, pattern(4));
    b.flush().unwrap();

    // The GPU sees both: copy each into a readback buffer.
    let (a, b) = (Arc::new(a), Arc::new(b));
    let graph = ctx.graph().unwrap();
    for (src, want) in [(&a, pattern(3)), (&b, pattern(4))] {
        let out = ctx
            .buffer(
                BufferDesc::readback(LEN, vk::BufferUsageFlags::TRANSFER_DST),
                "out",
            )
            .unwrap();
        let mut copy = CopyBuffer {
            src: src.clone(),
            dst: out.clone(),
        };
        let mut host = HostRead(out.clone());
        graph
            .record()
            .insert_pass("copy", &mut copy, ctx.graphics())
            .insert_pass("host", &mut host, ctx.graphics())
            .finish()
            .unwrap()
            .execute()
            .unwrap()
            .wait()
            .unwrap();
        let mut got = vec![0u8; LEN as usize];
        out.read(0, &mut got).unwrap();
        assert_eq!(got, want);
    }
    drop(graph);
    drop((a, b));
    drop(mem);
    assert_clean(&ctx);
}

#[test]
fn bad_mappings_and_unmapped_buffers_are_errors() {
    let ctx = ctx();
    let mut mem = AppMemory::new(&ctx, 1024, app_buffer_requirements(&ctx).memory_type_bits);
    let good = mem.buffer(0, 64, "good");
    let handle = good.handle();
    let mapping = HostMapping {
        memory: mem.memory,
        memory_size: 1024,
        offset: 0,
        ptr: mem.ptr,
        coherent: false,
        non_coherent_atom_size: 64,
    };
    let desc = BufferDesc::new(LEN, vk::BufferUsageFlags::TRANSFER_SRC);
    let wrap = |m: HostMapping| {
        // SAFETY: only validation runs; the wrappers are dropped unused (AppKeeps).
        unsafe {
            StBuffer::from_raw_mapped(
                ctx.device(),
                handle,
                desc.clone(),
                "bad",
                ResourceState::undefined(),
                Destroy::AppKeeps,
                m,
            )
        }
    };
    let zero_atom = HostMapping {
        non_coherent_atom_size: 0,
        ..mapping
    };
    assert!(matches!(wrap(zero_atom), Err(Error::InvalidArgument(_))));
    let past_end = HostMapping {
        offset: 1024 - LEN + 1,
        ..mapping
    };
    assert!(matches!(wrap(past_end), Err(Error::InvalidArgument(_))));
    let overflow = HostMapping {
        offset: u64::MAX - 10,
        ..mapping
    };
    assert!(matches!(wrap(overflow), Err(Error::InvalidArgument(_))));

    // A wrapped buffer the library does not map: host access is an error, not a crash.
    // SAFETY: `handle` is a live buffer of the device made with `desc`, bound to `mem`,
    // which is freed only after the wrapper is dropped below.
    let mut unmapped = unsafe {
        StBuffer::from_raw(
            ctx.device(),
            handle,
            desc.clone(),
            "unmapped",
            ResourceState::undefined(),
            Destroy::AppKeeps,
        )
    };
    assert!(unmapped.host_memory().is_none());
    assert!(matches!(unmapped.flush(), Err(Error::InvalidArgument(_))));
    assert!(matches!(
        unmapped.invalidate(),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        unmapped.mapped_slice(),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        unmapped.mapped_slice_mut(),
        Err(Error::InvalidArgument(_))
    ));
    drop((good, unmapped));
    drop(mem);
    assert_clean(&ctx);
}

/// The validation layer does check these ranges here, so the clean runs above mean something:
/// a misaligned flush of the same memory is reported.
#[test]
fn a_misaligned_flush_is_reported_by_validation() {
    let ctx = ctx();
    let atom = atom_size(&ctx);
    assert!(atom > 1, "lavapipe reports an atom of {atom}");
    let mem = AppMemory::new(&ctx, 16 * atom, u32::MAX);
    let bad = vk::MappedMemoryRange::default()
        .memory(mem.memory)
        .offset(1)
        .size(atom);
    // SAFETY: the memory is mapped; the range is deliberately invalid for the layer to see
    // (misaligned, inside the mapping), which flushing coherent memory tolerates.
    let _ = unsafe { ctx.device().flush_mapped_memory_ranges(&[bad]) };
    drop(mem);
    let m = ctx.validation_messages();
    assert!(m.count >= 1, "{m}");
    assert!(
        m.messages
            .iter()
            .any(|x| x.id.starts_with("VUID-VkMappedMemoryRange")),
        "{m}"
    );
}
