//! The vk-graph side: a `vk_graph::Graph` built, finalized and submitted each frame with the
//! library's own fill and copy commands. vk-graph creates its own instance and device (on
//! the same physical device as vk-baton's, found by name); its buffers keep their last
//! accesses across graphs, so each frame's first barrier orders it after the previous frame.

use crate::timer::{FrameTimer, Stamps};
use crate::workload::{read_of, write_of, BUFFERS, BUFFER_SIZE, FILL};
use ash::vk;
use std::sync::Arc;
use vk_graph::driver::buffer::{Buffer, BufferInfo};
use vk_graph::driver::device::Device;
use vk_graph::driver::fence::Fence;
use vk_graph::driver::instance::{Instance, InstanceInfo};
use vk_graph::pool::hash::HashPool;
use vk_graph::Graph;

/// vk-graph's device, buffers and resource pool, made once.
pub struct VkGraph {
    // Dropped first: the query pool goes before the device it belongs to.
    pub timer: FrameTimer,
    family: u32,
    pool: HashPool,
    bufs: Vec<Arc<Buffer>>,
    /// A second ring for the hand-written side on this device (`hand@vkg`), which vk-graph's
    /// access tracking never sees.
    hand_bufs: Vec<Arc<Buffer>>,
    /// Kept last so that the device outlives everything made from it.
    device: Device,
}

impl VkGraph {
    /// On the physical device named `device_name`; `debug` turns vk-graph's validation on (it
    /// panics on a message).
    pub fn new(device_name: &str, debug: bool) -> VkGraph {
        let instance =
            Instance::create(InstanceInfo::builder().debug(debug)).expect("vk-graph instance");
        let physical = Instance::physical_devices(&instance)
            .expect("physical devices")
            .into_iter()
            .find(|p| p.properties_v1_0.device_name == device_name)
            .unwrap_or_else(|| panic!("vk-graph sees no device named {device_name}"));
        let device = Device::try_from_physical_device(physical).expect("vk-graph device");
        let family = device
            .physical
            .queue_families
            .iter()
            .position(|f| f.queue_flags.contains(vk::QueueFlags::GRAPHICS))
            .expect("a graphics queue family") as u32;
        let valid_bits = device.physical.queue_families[family as usize].timestamp_valid_bits;
        let period = device.physical.properties_v1_0.limits.timestamp_period;
        let timer = FrameTimer::new(&device, period, valid_bits);
        let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
        let bufs: Vec<Arc<Buffer>> = (0..2 * BUFFERS)
            .map(|_| {
                Arc::new(
                    Buffer::create(&device, BufferInfo::device_mem(BUFFER_SIZE, usage))
                        .expect("buffer"),
                )
            })
            .collect();
        let (bufs, hand_bufs) = (bufs[..BUFFERS].to_vec(), bufs[BUFFERS..].to_vec());
        let pool = HashPool::new(&device);
        VkGraph {
            timer,
            family,
            pool,
            bufs,
            hand_bufs,
            device,
        }
    }

    /// The graph of one `n`-pass frame between the two timestamp commands.
    fn build(&self, n: usize) -> Graph {
        let stamps: Stamps = self.timer.stamps();
        let mut graph = Graph::new();
        let nodes: Vec<_> = self
            .bufs
            .iter()
            .map(|b| graph.bind_resource(b.clone()))
            .collect();
        // A command that accesses nothing records no barrier of its own but an empty
        // `vkCmdPipelineBarrier` (TOP_OF_PIPE → BOTTOM_OF_PIPE), then the timestamp.
        graph
            .begin_cmd()
            .debug_name("stamp")
            // SAFETY: recording on a graphics queue; the previous frame was waited for.
            .record_cmd(move |cmd| unsafe { stamps.start(&cmd.device, cmd.handle) })
            .end_cmd();
        for i in 0..n {
            match read_of(i) {
                None => {
                    graph.fill_buffer(nodes[write_of(i)], 0..BUFFER_SIZE, FILL);
                }
                Some(src) => {
                    graph.copy_buffer(nodes[src], nodes[write_of(i)]);
                }
            }
        }
        graph
            .begin_cmd()
            .debug_name("stamp")
            // SAFETY: as for the start.
            .record_cmd(move |cmd| unsafe { stamps.end(&cmd.device, cmd.handle) })
            .end_cmd();
        graph
    }

    /// vk-graph's device, its graphics family and the hand-written side's ring on it.
    pub fn for_hand(&self) -> (Device, u32, Vec<vk::Buffer>) {
        let bufs = self.hand_bufs.iter().map(|b| b.handle).collect();
        (self.device.clone(), self.family, bufs)
    }

    /// A timer on vk-graph's device.
    pub fn new_timer(&self) -> FrameTimer {
        let family = &self.device.physical.queue_families[self.family as usize];
        let period = self.device.physical.properties_v1_0.limits.timestamp_period;
        FrameTimer::new(&self.device, period, family.timestamp_valid_bits)
    }

    /// Each buffer's last access as vk-graph tracks it (from which it builds the next
    /// frame's first barriers).
    pub fn last_accesses(&self) -> Vec<vk::AccessFlags> {
        self.bufs
            .iter()
            .map(|b| {
                Buffer::sync_info(b)
                    .ranges
                    .iter()
                    .fold(vk::AccessFlags::empty(), |a, r| a | r.access_mask)
            })
            .collect()
    }

    /// Checks that vk-graph records the frame in program order with the stamps first and
    /// last (its `Schedule::reorder_cmds`, submission.rs:1820, may move commands that share no
    /// resource; the stamps share none). The same frame is built from commands that declare
    /// the accesses `fill_buffer`/`copy_buffer` declare (cmd/mod.rs:547-556) and log the order
    /// vk-graph records them in; the reordering sees only the accesses.
    pub fn check_order(&mut self, n: usize) {
        use std::sync::Mutex;
        use vk_graph::driver::sync::AccessType;
        let stamps: Stamps = self.timer.stamps();
        let log = Arc::new(Mutex::new(Vec::new()));
        let mut graph = Graph::new();
        let nodes: Vec<_> = self
            .bufs
            .iter()
            .map(|b| graph.bind_resource(b.clone()))
            .collect();
        let l = log.clone();
        graph
            .begin_cmd()
            .record_cmd(move |cmd| {
                l.lock().unwrap().push(usize::MAX);
                // SAFETY: recording on a graphics queue; the previous frame was waited for.
                unsafe { stamps.start(&cmd.device, cmd.handle) }
            })
            .end_cmd();
        for i in 0..n {
            let l = log.clone();
            let mut c = graph.begin_cmd();
            if let Some(src) = read_of(i) {
                c = c.subresource_access(nodes[src], 0..BUFFER_SIZE, AccessType::TransferRead);
            }
            let (src, dst) = (read_of(i).map(|b| nodes[b]), nodes[write_of(i)]);
            c.subresource_access(dst, 0..BUFFER_SIZE, AccessType::TransferWrite)
                .record_cmd(move |cmd| {
                    l.lock().unwrap().push(i);
                    let dst = cmd.resource(dst).handle;
                    let src = src.map(|s| cmd.resource(s).handle);
                    // SAFETY: recording; vk-graph keeps the buffers alive and ordered.
                    unsafe {
                        match src {
                            None => {
                                cmd.device
                                    .cmd_fill_buffer(cmd.handle, dst, 0, BUFFER_SIZE, FILL)
                            }
                            Some(src) => {
                                let region = vk::BufferCopy::default().size(BUFFER_SIZE);
                                cmd.device.cmd_copy_buffer(cmd.handle, src, dst, &[region])
                            }
                        }
                    }
                })
                .end_cmd();
        }
        let l = log.clone();
        graph
            .begin_cmd()
            .record_cmd(move |cmd| {
                l.lock().unwrap().push(usize::MAX - 1);
                // SAFETY: as for the start.
                unsafe { stamps.end(&cmd.device, cmd.handle) }
            })
            .end_cmd();
        graph
            .finalize()
            .queue_submit(&mut self.pool, self.family, 0)
            .expect("vk-graph submit")
            .wait()
            .expect("vk-graph wait");
        let expected: Vec<usize> = [usize::MAX]
            .into_iter()
            .chain(0..n)
            .chain([usize::MAX - 1])
            .collect();
        assert!(
            *log.lock().unwrap() == expected,
            "vk-graph recorded the {n}-pass frame out of program order"
        );
    }

    /// Builds, records and submits one frame; returns its fence after the submit.
    pub fn frame(&mut self, n: usize) -> Fence {
        let graph = self.build(n);
        graph
            .finalize()
            .queue_submit(&mut self.pool, self.family, 0)
            .expect("vk-graph submit")
    }
}
