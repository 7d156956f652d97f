//! Which pipeline stages a queue can run, from the Vulkan specification's table of supported
//! pipeline stage flags (section "Pipeline Stages", "Supported pipeline stage flags").
//!
//! A stage mask in a barrier or a semaphore operation recorded on a queue may only hold stages
//! that the queue family supports (`VUID-vkCmdPipelineBarrier2-srcStageMask-03849`,
//! `-dstStageMask-03850`, `VUID-vkQueueSubmit2-stageMask-03869`/`-03870`). The planner narrows
//! every access to the stages of its queue with [`narrow_stages`] and refuses an access whose
//! stages the queue cannot run at all.
//!
//! ```
//! use vk_baton::access::{narrow_stages, supported_stages};
//! use vk_baton::ash::vk::{PipelineStageFlags2 as S, QueueFlags as Q};
//! // A uniform buffer read (vertex, fragment and compute shaders) on a compute-only queue.
//! let uniform = S::VERTEX_SHADER | S::FRAGMENT_SHADER | S::COMPUTE_SHADER;
//! assert_eq!(narrow_stages(uniform, Q::COMPUTE | Q::TRANSFER), S::COMPUTE_SHADER);
//! // Indirect arguments are read by draws and dispatches: compute queues have the stage.
//! assert!(supported_stages(Q::COMPUTE).contains(S::DRAW_INDIRECT));
//! assert!(!supported_stages(Q::TRANSFER).contains(S::DRAW_INDIRECT));
//! ```

use ash::vk;
use vk::PipelineStageFlags2 as S;
use vk::QueueFlags as Q;

const fn s(bits: &[S]) -> S {
    let mut m = 0;
    let mut i = 0;
    while i < bits.len() {
        m |= bits[i].as_raw();
        i += 1;
    }
    S::from_raw(m)
}

const fn q(bits: &[Q]) -> Q {
    let mut m = 0;
    let mut i = 0;
    while i < bits.len() {
        m |= bits[i].as_raw();
        i += 1;
    }
    Q::from_raw(m)
}

/// The specification's table: stages, and the queue capabilities of which any one suffices
/// (empty: every queue).
const TABLE: [(S, Q); 8] = [
    // None required.
    (
        s(&[S::TOP_OF_PIPE, S::BOTTOM_OF_PIPE, S::HOST, S::ALL_COMMANDS]),
        Q::empty(),
    ),
    // GRAPHICS or COMPUTE.
    (
        s(&[
            S::DRAW_INDIRECT,
            S::CONDITIONAL_RENDERING_EXT,
            S::COMMAND_PREPROCESS_NV,
        ]),
        q(&[Q::GRAPHICS, Q::COMPUTE]),
    ),
    // GRAPHICS.
    (
        s(&[
            S::VERTEX_INPUT,
            S::VERTEX_ATTRIBUTE_INPUT,
            S::INDEX_INPUT,
            S::VERTEX_SHADER,
            S::TESSELLATION_CONTROL_SHADER,
            S::TESSELLATION_EVALUATION_SHADER,
            S::GEOMETRY_SHADER,
            S::PRE_RASTERIZATION_SHADERS,
            S::FRAGMENT_SHADER,
            S::EARLY_FRAGMENT_TESTS,
            S::LATE_FRAGMENT_TESTS,
            S::COLOR_ATTACHMENT_OUTPUT,
            S::ALL_GRAPHICS,
            S::TRANSFORM_FEEDBACK_EXT,
            S::FRAGMENT_SHADING_RATE_ATTACHMENT_KHR,
            S::FRAGMENT_DENSITY_PROCESS_EXT,
            S::TASK_SHADER_EXT,
            S::MESH_SHADER_EXT,
            S::SUBPASS_SHADER_HUAWEI,
            S::INVOCATION_MASK_HUAWEI,
            S::CLUSTER_CULLING_SHADER_HUAWEI,
        ]),
        Q::GRAPHICS,
    ),
    // COMPUTE.
    (
        s(&[
            S::COMPUTE_SHADER,
            S::ACCELERATION_STRUCTURE_BUILD_KHR,
            S::RAY_TRACING_SHADER_KHR,
            S::MICROMAP_BUILD_EXT,
        ]),
        Q::COMPUTE,
    ),
    // GRAPHICS, COMPUTE or TRANSFER.
    (
        s(&[
            S::ALL_TRANSFER,
            S::COPY,
            S::RESOLVE,
            S::BLIT,
            S::CLEAR,
            S::ACCELERATION_STRUCTURE_COPY_KHR,
        ]),
        q(&[Q::GRAPHICS, Q::COMPUTE, Q::TRANSFER]),
    ),
    // Each needs its own capability.
    (S::VIDEO_DECODE_KHR, Q::VIDEO_DECODE_KHR),
    (S::VIDEO_ENCODE_KHR, Q::VIDEO_ENCODE_KHR),
    (S::OPTICAL_FLOW_NV, Q::OPTICAL_FLOW_NV),
];

/// Every stage the table names (stages outside it are newer than this crate and pass through
/// [`narrow_stages`] unchanged: nothing here can judge them).
const KNOWN: S = {
    let mut m = 0;
    let mut i = 0;
    while i < TABLE.len() {
        m |= TABLE[i].0.as_raw();
        i += 1;
    }
    S::from_raw(m)
};

/// The pipeline stages a queue family with capabilities `caps` supports.
///
/// Graphics and compute queues support transfer stages even where the family does not report
/// `TRANSFER`, as the specification's table says.
///
/// ```
/// use vk_baton::access::supported_stages;
/// use vk_baton::ash::vk::{PipelineStageFlags2 as S, QueueFlags as Q};
/// let transfer = supported_stages(Q::TRANSFER);
/// assert!(transfer.contains(S::COPY | S::ALL_TRANSFER | S::ALL_COMMANDS | S::HOST));
/// assert!(!transfer.intersects(S::COMPUTE_SHADER | S::FRAGMENT_SHADER));
/// assert!(supported_stages(Q::COMPUTE).contains(S::COPY));
/// ```
pub const fn supported_stages(caps: Q) -> S {
    // The answer for every subset of the capabilities the table names, found once: the
    // planner asks per use and per stage mask it derives.
    const BY_SUBSET: [S; 64] = {
        let mut out = [S::empty(); 64];
        let mut k = 0;
        while k < 64 {
            let mut caps = 0;
            let mut b = 0;
            while b < NAMED.len() {
                if k & (1 << b) != 0 {
                    caps |= NAMED[b].as_raw();
                }
                b += 1;
            }
            out[k] = supported_by_table(Q::from_raw(caps));
            k += 1;
        }
        out
    };
    // The subset's index, gathered from the capability bits (`GRAPHICS`, `COMPUTE` and
    // `TRANSFER` are bits 0 to 2, the video ones 5 and 6, optical flow 8) rather than looped
    // over `NAMED` per call (`tests::subset_index_gathers_the_named_bits` checks it).
    BY_SUBSET[subset_index(caps)]
}

/// The queue capabilities the table names, in the order of their bits in a subset's index.
const NAMED: [Q; 6] = [
    Q::GRAPHICS,
    Q::COMPUTE,
    Q::TRANSFER,
    Q::VIDEO_DECODE_KHR,
    Q::VIDEO_ENCODE_KHR,
    Q::OPTICAL_FLOW_NV,
];

/// The index of `caps` among the subsets of [`NAMED`].
const fn subset_index(caps: Q) -> usize {
    let raw = caps.as_raw() as usize;
    (raw & 0x7) | (raw >> 2 & 0x18) | (raw >> 3 & 0x20)
}

/// [`supported_stages`], read from the table row by row.
const fn supported_by_table(caps: Q) -> S {
    let mut m = 0;
    let mut i = 0;
    while i < TABLE.len() {
        let (stages, needs) = TABLE[i];
        if needs.is_empty() || caps.intersects(needs) {
            m |= stages.as_raw();
        }
        i += 1;
    }
    S::from_raw(m)
}

/// `stages` without the stages a queue with `caps` cannot run. `ALL_GRAPHICS` on a queue
/// without graphics keeps the one stage of it such a queue may have (`DRAW_INDIRECT`, on
/// compute queues). Stages this crate does not know pass unchanged.
///
/// ```
/// use vk_baton::access::narrow_stages;
/// use vk_baton::ash::vk::{PipelineStageFlags2 as S, QueueFlags as Q};
/// assert_eq!(narrow_stages(S::DRAW_INDIRECT, Q::TRANSFER), S::NONE);
/// assert_eq!(narrow_stages(S::ALL_GRAPHICS, Q::COMPUTE), S::DRAW_INDIRECT);
/// assert_eq!(narrow_stages(S::ALL_COMMANDS, Q::TRANSFER), S::ALL_COMMANDS);
/// ```
pub const fn narrow_stages(stages: S, caps: Q) -> S {
    let mut out = stages.as_raw() & (supported_stages(caps).as_raw() | !KNOWN.as_raw());
    if stages.contains(S::ALL_GRAPHICS) && !caps.contains(Q::GRAPHICS) {
        out |= S::DRAW_INDIRECT.as_raw() & supported_stages(caps).as_raw();
    }
    S::from_raw(out)
}

/// The queue capabilities of which any one would let a queue run at least one of `stages`
/// (empty when some of `stages` run on every queue, or when `stages` is empty). For error
/// messages about an access that a queue cannot perform.
///
/// ```
/// use vk_baton::access::capabilities_for;
/// use vk_baton::ash::vk::{PipelineStageFlags2 as S, QueueFlags as Q};
/// assert_eq!(capabilities_for(S::FRAGMENT_SHADER), Q::GRAPHICS);
/// assert_eq!(capabilities_for(S::FRAGMENT_SHADER | S::COMPUTE_SHADER), Q::GRAPHICS | Q::COMPUTE);
/// ```
pub const fn capabilities_for(stages: S) -> Q {
    let mut m = 0;
    let mut i = 0;
    while i < TABLE.len() {
        let (row, needs) = TABLE[i];
        if row.intersects(stages) {
            if needs.is_empty() {
                return Q::empty();
            }
            m |= needs.as_raw();
        }
        i += 1;
    }
    Q::from_raw(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The gathered index of each subset of the named capabilities is the subset's bits in the
    /// order of `NAMED`; capabilities it does not name change nothing.
    #[test]
    fn subset_index_gathers_the_named_bits() {
        let others = Q::SPARSE_BINDING | Q::PROTECTED | Q::from_raw(0x80);
        for k in 0..64 {
            let caps = (0..6)
                .filter(|b| k & (1 << b) != 0)
                .fold(Q::empty(), |c, b| c | NAMED[b]);
            assert_eq!(subset_index(caps), k, "{caps:?}");
            assert_eq!(subset_index(caps | others), k, "{caps:?}");
        }
    }

    const GCT: Q = Q::from_raw(Q::GRAPHICS.as_raw() | Q::COMPUTE.as_raw() | Q::TRANSFER.as_raw());
    const CT: Q = Q::from_raw(Q::COMPUTE.as_raw() | Q::TRANSFER.as_raw());

    /// The answers found once per subset of capabilities are the table's, whatever other
    /// capabilities a family reports beside them.
    #[test]
    fn supported_stages_are_the_tables_for_every_set_of_capabilities() {
        for bits in 0..1u32 << 10 {
            let caps = Q::from_raw(bits);
            assert_eq!(supported_stages(caps), supported_by_table(caps), "{caps:?}");
        }
    }

    /// The table, stage by stage, on the three kinds of queue (graphics+compute+transfer,
    /// compute+transfer, transfer-only): written out again here, from the specification, so
    /// that a slip in `TABLE` shows.
    #[test]
    fn each_stage_on_each_kind_of_queue() {
        let rows: &[(S, [bool; 3])] = &[
            (S::TOP_OF_PIPE, [true, true, true]),
            (S::BOTTOM_OF_PIPE, [true, true, true]),
            (S::HOST, [true, true, true]),
            (S::ALL_COMMANDS, [true, true, true]),
            (S::DRAW_INDIRECT, [true, true, false]),
            (S::VERTEX_INPUT, [true, false, false]),
            (S::VERTEX_ATTRIBUTE_INPUT, [true, false, false]),
            (S::INDEX_INPUT, [true, false, false]),
            (S::VERTEX_SHADER, [true, false, false]),
            (S::TESSELLATION_CONTROL_SHADER, [true, false, false]),
            (S::TESSELLATION_EVALUATION_SHADER, [true, false, false]),
            (S::GEOMETRY_SHADER, [true, false, false]),
            (S::PRE_RASTERIZATION_SHADERS, [true, false, false]),
            (S::FRAGMENT_SHADER, [true, false, false]),
            (S::EARLY_FRAGMENT_TESTS, [true, false, false]),
            (S::LATE_FRAGMENT_TESTS, [true, false, false]),
            (S::COLOR_ATTACHMENT_OUTPUT, [true, false, false]),
            (S::ALL_GRAPHICS, [true, false, false]),
            (S::COMPUTE_SHADER, [true, true, false]),
            (S::ALL_TRANSFER, [true, true, true]),
            (S::COPY, [true, true, true]),
            (S::CLEAR, [true, true, true]),
            (S::RESOLVE, [true, true, true]),
            (S::BLIT, [true, true, true]),
            (S::VIDEO_DECODE_KHR, [false, false, false]),
        ];
        for &(stage, expect) in rows {
            for (caps, ok) in [GCT, CT, Q::TRANSFER].into_iter().zip(expect) {
                assert_eq!(
                    supported_stages(caps).contains(stage),
                    ok,
                    "{stage:?} on {caps:?}"
                );
                let narrowed = narrow_stages(stage, caps);
                if stage == S::ALL_GRAPHICS && caps == CT {
                    assert_eq!(narrowed, S::DRAW_INDIRECT);
                } else {
                    assert_eq!(
                        narrowed,
                        if ok { stage } else { S::NONE },
                        "{stage:?} on {caps:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn graphics_and_compute_queues_run_transfers_without_the_transfer_bit() {
        assert!(supported_stages(Q::GRAPHICS).contains(S::ALL_TRANSFER | S::COPY));
        assert!(supported_stages(Q::COMPUTE).contains(S::ALL_TRANSFER | S::CLEAR));
        assert!(!supported_stages(Q::GRAPHICS).contains(S::COMPUTE_SHADER));
    }

    #[test]
    fn video_stages_need_their_own_capability() {
        assert!(supported_stages(Q::VIDEO_DECODE_KHR).contains(S::VIDEO_DECODE_KHR));
        assert!(!supported_stages(Q::VIDEO_DECODE_KHR).intersects(S::VIDEO_ENCODE_KHR | S::COPY));
        assert!(supported_stages(Q::VIDEO_ENCODE_KHR).contains(S::VIDEO_ENCODE_KHR));
    }

    #[test]
    fn narrowing_keeps_the_supported_part_and_unknown_bits() {
        let uniform = S::VERTEX_SHADER | S::FRAGMENT_SHADER | S::COMPUTE_SHADER;
        assert_eq!(narrow_stages(uniform, GCT), uniform);
        assert_eq!(narrow_stages(uniform, CT), S::COMPUTE_SHADER);
        assert_eq!(narrow_stages(uniform, Q::TRANSFER), S::NONE);
        let unknown = S::from_raw(1 << 62);
        assert_eq!(
            narrow_stages(unknown | S::FRAGMENT_SHADER, Q::TRANSFER),
            unknown
        );
    }

    #[test]
    fn capabilities_name_any_queue_that_would_do() {
        let uniform = S::VERTEX_SHADER | S::FRAGMENT_SHADER | S::COMPUTE_SHADER;
        assert_eq!(capabilities_for(uniform), Q::GRAPHICS | Q::COMPUTE);
        assert_eq!(capabilities_for(S::DRAW_INDIRECT), Q::GRAPHICS | Q::COMPUTE);
        assert_eq!(
            capabilities_for(S::COPY),
            Q::GRAPHICS | Q::COMPUTE | Q::TRANSFER
        );
        assert_eq!(capabilities_for(S::HOST | S::FRAGMENT_SHADER), Q::empty());
        assert_eq!(capabilities_for(S::NONE), Q::empty());
    }
}
