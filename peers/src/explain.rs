//! `--explain`: what each side records for a 10-pass frame in steady state (after a frame
//! like it), so the sides' barriers can be compared command by command.

use crate::baton::Baton;
use crate::timer::FrameTimer;
use crate::vkgraph::VkGraph;
use crate::workload::{read_of, write_of, BUFFERS};
use std::sync::Arc;
use vk_baton::ash::vk;
use vk_baton::{Graph, Queue, StBuffer};
use vk_graph::driver::sync::{self as vk_sync, AccessType};

const N: usize = 10;

pub fn print(
    graph: &Graph,
    q: &Queue,
    bufs: &Arc<Vec<Arc<StBuffer>>>,
    timer: FrameTimer,
    peer: &mut VkGraph,
) {
    let mut baton = Baton::new(timer, bufs, N);
    for _ in 0..2 {
        baton.frame(graph, q).wait().expect("wait");
    }
    println!("== vk-baton: the plan of a {N}-pass frame after one like it (Plan's Display)");
    println!(
        "(passes 0 and {} are the timestamp passes; step k is the workload's pass k-1)",
        N + 1
    );
    println!("{}", baton.plan_text(graph, q));

    println!("== hand-written (benches/frame.rs's model), per frame:");
    println!("vkBeginCommandBuffer(ONE_TIME_SUBMIT), reset queries, timestamp(TOP_OF_PIPE)");
    println!("before every pass, the frame's first included: vkCmdPipelineBarrier2 with one");
    println!("  VkMemoryBarrier2 ALL_TRANSFER/TRANSFER_WRITE -> ALL_TRANSFER/TRANSFER_READ|TRANSFER_WRITE");
    println!(
        "timestamp(ALL_COMMANDS), vkEndCommandBuffer, vkQueueSubmit2(1 command buffer, fence)\n"
    );

    println!("== vk-graph 0.14.8, per frame (submission.rs record_execution_barriers, with");
    println!(
        "   the masks of vk-graph's own vk_sync::get_buffer_memory_barrier from each buffer's"
    );
    println!("   last access, which vk-graph keeps across graphs):");
    println!("vkBeginCommandBuffer(ONE_TIME_SUBMIT), then per command (the stamps included):");
    let mut last = [AccessType::Nothing; BUFFERS];
    // One frame to reach the steady state, then the printed one.
    for frame in 0..2 {
        if frame == 1 {
            println!("  stamp: vkCmdPipelineBarrier(TOP_OF_PIPE -> BOTTOM_OF_PIPE, no barriers), timestamp");
        }
        for i in 0..N {
            let uses = read_of(i)
                .map(|b| (b, AccessType::TransferRead))
                .into_iter()
                .chain([(write_of(i), AccessType::TransferWrite)]);
            let mut src = vk::PipelineStageFlags::TOP_OF_PIPE;
            let mut dst = vk::PipelineStageFlags::BOTTOM_OF_PIPE;
            let mut text = Vec::new();
            for (b, next) in uses {
                let prev = [last[b]];
                let nexts = [next];
                let (s, d, m) = vk_sync::get_buffer_memory_barrier(&vk_sync::BufferBarrier {
                    previous_accesses: &prev,
                    next_accesses: &nexts,
                    src_queue_family_index: vk::QUEUE_FAMILY_IGNORED,
                    dst_queue_family_index: vk::QUEUE_FAMILY_IGNORED,
                    buffer: vk::Buffer::null(),
                    offset: 0,
                    size: 4096,
                });
                src |= s;
                dst |= d;
                text.push(format!(
                    "buf{b} {:?}->{:?} ({:?} -> {:?})",
                    m.src_access_mask, m.dst_access_mask, prev[0], next
                ));
                last[b] = next;
            }
            if frame == 1 {
                println!("  pass {i}: vkCmdPipelineBarrier({src:?} -> {dst:?}), VkBufferMemoryBarrier: {}", text.join("; "));
            }
        }
    }
    println!(
        "  stamp: vkCmdPipelineBarrier(TOP_OF_PIPE -> BOTTOM_OF_PIPE, no barriers), timestamp"
    );
    // The model's last accesses must be vk-graph's own after the same two frames.
    for _ in 0..2 {
        peer.frame(N).wait().expect("vk-graph wait");
    }
    let model: Vec<vk::AccessFlags> = last
        .iter()
        .map(|a| match a {
            AccessType::TransferRead => vk::AccessFlags::TRANSFER_READ,
            AccessType::TransferWrite => vk::AccessFlags::TRANSFER_WRITE,
            _ => vk::AccessFlags::empty(),
        })
        .collect();
    let tracked = peer.last_accesses();
    assert_eq!(model, tracked, "the model's last accesses are vk-graph's");
    println!(
        "  (checked: after two frames vk-graph's buffers hold the last accesses of this model)"
    );
    println!("vkEndCommandBuffer, vkQueueSubmit (sync1) of 1 command buffer with a new fence, no semaphore");
}
