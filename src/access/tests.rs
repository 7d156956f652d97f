//! Every row of the access table is consistent with the specification: its stages can perform
//! its access flags, its layout allows them, its usage flags are the ones they need, its queue
//! requirement only narrows what its stages allow, and its name says whether it writes.

use super::*;
use std::collections::HashSet;
use vk::AccessFlags2 as A;
use vk::BufferUsageFlags as BU;
use vk::ImageLayout as L;
use vk::ImageUsageFlags as IU;
use vk::PipelineStageFlags2 as S;
use vk::QueueFlags as Q;

/// What the specification allows for one access flag: the stages that perform it (its table
/// "Supported access types", without ALL_COMMANDS/ALL_GRAPHICS, which no row uses), the image
/// layouts it may happen in (UNDEFINED: buffers only), and the usage it needs.
struct BitRule {
    bit: A,
    stages: S,
    layouts: &'static [L],
    image: IU,
    buffer: BU,
}

const SHADER_STAGES: S = S::from_raw(
    S::VERTEX_SHADER.as_raw()
        | S::TESSELLATION_CONTROL_SHADER.as_raw()
        | S::TESSELLATION_EVALUATION_SHADER.as_raw()
        | S::GEOMETRY_SHADER.as_raw()
        | S::FRAGMENT_SHADER.as_raw()
        | S::COMPUTE_SHADER.as_raw()
        | S::PRE_RASTERIZATION_SHADERS.as_raw()
        | S::TASK_SHADER_EXT.as_raw()
        | S::MESH_SHADER_EXT.as_raw()
        | S::RAY_TRACING_SHADER_KHR.as_raw(),
);
const TRANSFER_READ_STAGES: S = S::from_raw(
    S::ALL_TRANSFER.as_raw() | S::COPY.as_raw() | S::BLIT.as_raw() | S::RESOLVE.as_raw(),
);
const TRANSFER_WRITE_STAGES: S = S::from_raw(TRANSFER_READ_STAGES.as_raw() | S::CLEAR.as_raw());
const AS_WRITE_STAGES: S = S::from_raw(
    S::ACCELERATION_STRUCTURE_BUILD_KHR.as_raw() | S::ACCELERATION_STRUCTURE_COPY_KHR.as_raw(),
);
const AS_READ_STAGES: S = S::from_raw(SHADER_STAGES.as_raw() | AS_WRITE_STAGES.as_raw());
const TESTS: S = S::from_raw(S::EARLY_FRAGMENT_TESTS.as_raw() | S::LATE_FRAGMENT_TESTS.as_raw());
const SAMPLED_LAYOUTS: &[L] = &[
    L::SHADER_READ_ONLY_OPTIMAL,
    L::DEPTH_STENCIL_READ_ONLY_OPTIMAL,
    L::READ_ONLY_OPTIMAL,
    L::GENERAL,
];

fn rules() -> Vec<BitRule> {
    let rule = |bit, stages, layouts, image, buffer| BitRule {
        bit,
        stages,
        layouts,
        image,
        buffer,
    };
    let (no_i, no_b) = (IU::empty(), BU::empty());
    let buffers_only: &'static [L] = &[L::UNDEFINED];
    vec![
        rule(
            A::TRANSFER_READ,
            TRANSFER_READ_STAGES,
            &[L::TRANSFER_SRC_OPTIMAL, L::GENERAL],
            IU::TRANSFER_SRC,
            BU::TRANSFER_SRC,
        ),
        rule(
            A::TRANSFER_WRITE,
            TRANSFER_WRITE_STAGES,
            &[L::TRANSFER_DST_OPTIMAL, L::GENERAL],
            IU::TRANSFER_DST,
            BU::TRANSFER_DST,
        ),
        rule(
            A::SHADER_STORAGE_READ,
            SHADER_STAGES,
            &[L::GENERAL],
            IU::STORAGE,
            BU::STORAGE_BUFFER,
        ),
        rule(
            A::SHADER_STORAGE_WRITE,
            SHADER_STAGES,
            &[L::GENERAL],
            IU::STORAGE,
            BU::STORAGE_BUFFER,
        ),
        rule(
            A::SHADER_SAMPLED_READ,
            SHADER_STAGES,
            SAMPLED_LAYOUTS,
            IU::SAMPLED,
            BU::UNIFORM_TEXEL_BUFFER,
        ),
        rule(
            A::UNIFORM_READ,
            SHADER_STAGES,
            buffers_only,
            no_i,
            BU::UNIFORM_BUFFER,
        ),
        rule(
            A::INPUT_ATTACHMENT_READ,
            S::FRAGMENT_SHADER,
            &[
                L::SHADER_READ_ONLY_OPTIMAL,
                L::DEPTH_STENCIL_READ_ONLY_OPTIMAL,
                L::GENERAL,
            ],
            IU::INPUT_ATTACHMENT,
            no_b,
        ),
        rule(
            A::COLOR_ATTACHMENT_READ,
            S::COLOR_ATTACHMENT_OUTPUT,
            &[L::COLOR_ATTACHMENT_OPTIMAL, L::GENERAL],
            IU::COLOR_ATTACHMENT,
            no_b,
        ),
        rule(
            A::COLOR_ATTACHMENT_WRITE,
            S::COLOR_ATTACHMENT_OUTPUT,
            &[L::COLOR_ATTACHMENT_OPTIMAL, L::GENERAL],
            IU::COLOR_ATTACHMENT,
            no_b,
        ),
        rule(
            A::DEPTH_STENCIL_ATTACHMENT_READ,
            TESTS,
            &[
                L::DEPTH_STENCIL_ATTACHMENT_OPTIMAL,
                L::DEPTH_STENCIL_READ_ONLY_OPTIMAL,
                L::GENERAL,
            ],
            IU::DEPTH_STENCIL_ATTACHMENT,
            no_b,
        ),
        rule(
            A::DEPTH_STENCIL_ATTACHMENT_WRITE,
            TESTS,
            &[L::DEPTH_STENCIL_ATTACHMENT_OPTIMAL, L::GENERAL],
            IU::DEPTH_STENCIL_ATTACHMENT,
            no_b,
        ),
        rule(
            A::VERTEX_ATTRIBUTE_READ,
            S::VERTEX_ATTRIBUTE_INPUT,
            buffers_only,
            no_i,
            BU::VERTEX_BUFFER,
        ),
        rule(
            A::INDEX_READ,
            S::INDEX_INPUT,
            buffers_only,
            no_i,
            BU::INDEX_BUFFER,
        ),
        rule(
            A::INDIRECT_COMMAND_READ,
            S::DRAW_INDIRECT,
            buffers_only,
            no_i,
            BU::INDIRECT_BUFFER,
        ),
        rule(
            A::ACCELERATION_STRUCTURE_READ_KHR,
            AS_READ_STAGES,
            buffers_only,
            no_i,
            BU::ACCELERATION_STRUCTURE_STORAGE_KHR,
        ),
        rule(
            A::ACCELERATION_STRUCTURE_WRITE_KHR,
            AS_WRITE_STAGES,
            buffers_only,
            no_i,
            BU::ACCELERATION_STRUCTURE_STORAGE_KHR,
        ),
        // The rows use this group bit for reads through device addresses only (build
        // inputs, shader binding tables), whose usage the command decides.
        rule(
            A::SHADER_READ,
            S::from_raw(SHADER_STAGES.as_raw() | S::ACCELERATION_STRUCTURE_BUILD_KHR.as_raw()),
            buffers_only,
            no_i,
            no_b,
        ),
        rule(
            A::VIDEO_DECODE_READ_KHR,
            S::VIDEO_DECODE_KHR,
            &[L::UNDEFINED, L::VIDEO_DECODE_DPB_KHR],
            IU::VIDEO_DECODE_DPB_KHR,
            BU::VIDEO_DECODE_SRC_KHR,
        ),
        rule(
            A::VIDEO_DECODE_WRITE_KHR,
            S::VIDEO_DECODE_KHR,
            &[L::VIDEO_DECODE_DST_KHR, L::VIDEO_DECODE_DPB_KHR],
            IU::VIDEO_DECODE_DST_KHR,
            no_b,
        ),
        rule(
            A::VIDEO_ENCODE_READ_KHR,
            S::VIDEO_ENCODE_KHR,
            &[L::VIDEO_ENCODE_SRC_KHR, L::VIDEO_ENCODE_DPB_KHR],
            IU::VIDEO_ENCODE_SRC_KHR,
            no_b,
        ),
        rule(
            A::VIDEO_ENCODE_WRITE_KHR,
            S::VIDEO_ENCODE_KHR,
            &[L::UNDEFINED, L::VIDEO_ENCODE_DPB_KHR],
            IU::VIDEO_ENCODE_DPB_KHR,
            BU::VIDEO_ENCODE_DST_KHR,
        ),
        rule(A::HOST_READ, S::HOST, &[L::GENERAL], no_i, no_b),
        rule(A::HOST_WRITE, S::HOST, &[L::GENERAL], no_i, no_b),
        rule(A::MEMORY_READ, S::ALL_COMMANDS, &[L::GENERAL], no_i, no_b),
        rule(A::MEMORY_WRITE, S::ALL_COMMANDS, &[L::GENERAL], no_i, no_b),
    ]
}

/// The one row that performs an access in a layout that does not allow it: the pass moves the
/// levels between layouts itself, and the row's layout is where it leaves them.
const CHANGES_LAYOUTS_ITSELF: &str = "MIP_CHAIN_BLIT_READ_WRITE";

/// Input attachments of a `VkRenderPass`, with their load op: the attachment read bit stands
/// for the load (LOAD), which happens in the input attachment's own layout and needs no usage
/// beyond `INPUT_ATTACHMENT`. Only the input attachment bit's rule decides layout and usage.
const INPUT_ATTACHMENTS_WITH_LOAD: [(&str, A); 2] = [
    (
        "FRAGMENT_SHADER_INPUT_ATTACHMENT_READ",
        A::COLOR_ATTACHMENT_READ,
    ),
    (
        "FRAGMENT_SHADER_DEPTH_INPUT_ATTACHMENT_READ",
        A::DEPTH_STENCIL_ATTACHMENT_READ,
    ),
];

/// Rows whose usage the command's valid usage decides rather than the access bits: buffers
/// read or written through device addresses, and DPB pictures (the bit's rule gives the usage
/// of the other image the command touches with it).
const USAGE_OF_THE_COMMAND: [(&str, IU, BU); 6] = [
    (
        "ACCELERATION_STRUCTURE_BUILD_INPUT_READ",
        IU::empty(),
        BU::from_raw(
            BU::ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_KHR.as_raw()
                | BU::SHADER_DEVICE_ADDRESS.as_raw(),
        ),
    ),
    (
        "ACCELERATION_STRUCTURE_BUILD_SCRATCH_READ_WRITE",
        IU::empty(),
        BU::from_raw(BU::STORAGE_BUFFER.as_raw() | BU::SHADER_DEVICE_ADDRESS.as_raw()),
    ),
    (
        "SHADER_BINDING_TABLE_READ",
        IU::empty(),
        BU::from_raw(BU::SHADER_BINDING_TABLE_KHR.as_raw() | BU::SHADER_DEVICE_ADDRESS.as_raw()),
    ),
    (
        "VIDEO_DECODE_DPB_WRITE",
        IU::VIDEO_DECODE_DPB_KHR,
        BU::empty(),
    ),
    (
        "VIDEO_DECODE_OUTPUT_DPB_WRITE",
        IU::from_raw(IU::VIDEO_DECODE_DST_KHR.as_raw() | IU::VIDEO_DECODE_DPB_KHR.as_raw()),
        BU::empty(),
    ),
    (
        "VIDEO_ENCODE_DPB_READ",
        IU::VIDEO_ENCODE_DPB_KHR,
        BU::empty(),
    ),
];

/// Some queue of each kind a device has: graphics+compute+transfer, video decode, video
/// encode.
const QUEUE_KINDS: [Q; 3] = [
    Q::from_raw(Q::GRAPHICS.as_raw() | Q::COMPUTE.as_raw() | Q::TRANSFER.as_raw()),
    Q::VIDEO_DECODE_KHR,
    Q::VIDEO_ENCODE_KHR,
];

#[test]
fn every_row_is_consistent_with_the_specification() {
    let rules = rules();
    assert!(ACCESS_TABLE.len() >= 70, "{}", ACCESS_TABLE.len());
    for row in ACCESS_TABLE {
        let ctx = row.name;
        let bits: Vec<&BitRule> = rules
            .iter()
            .filter(|r| row.access.contains(r.bit))
            .collect();
        let known = bits.iter().fold(A::NONE, |m, r| m | r.bit);
        assert_eq!(known, row.access, "{ctx}: access bits without a rule here");
        if row.name == "PRESENT" {
            // The presentation engine: no stage, no access; the planner chooses the stages.
            assert_eq!((row.stages, row.access), (S::NONE, A::NONE));
            assert_eq!(row.layout, L::PRESENT_SRC_KHR);
            continue;
        }
        assert!(!bits.is_empty(), "{ctx}: no access");

        // Stages: every access bit is performed by one of the row's stages, and every stage
        // performs one of the row's access bits.
        let allowed = |r: &BitRule| {
            if r.stages == S::ALL_COMMANDS {
                S::from_raw(!0)
            } else {
                r.stages
            }
        };
        for r in &bits {
            assert!(row.stages.intersects(allowed(r)), "{ctx}: {:?}", r.bit);
        }
        let performing = bits.iter().fold(S::NONE, |m, r| m | allowed(r));
        assert!(performing.contains(row.stages), "{ctx}: {:?}", row.stages);

        // Layout: allowed for every access bit.
        let load = INPUT_ATTACHMENTS_WITH_LOAD
            .iter()
            .find(|(name, _)| *name == row.name)
            .map(|(_, bit)| *bit);
        let bits: Vec<&BitRule> = bits.into_iter().filter(|r| Some(r.bit) != load).collect();
        if row.name != CHANGES_LAYOUTS_ITSELF {
            for r in &bits {
                assert!(r.layouts.contains(&row.layout), "{ctx}: {:?}", r.bit);
            }
        }

        // Usage: exactly what the access bits need (or the command, for a few), on images,
        // on buffers, or on both.
        let (image, buffer) = match USAGE_OF_THE_COMMAND.iter().find(|u| u.0 == row.name) {
            Some(&(_, image, buffer)) => (image, buffer),
            None => (
                bits.iter().fold(IU::empty(), |m, r| m | r.image),
                bits.iter().fold(BU::empty(), |m, r| m | r.buffer),
            ),
        };
        assert!(
            row.image_usage == image || row.image_usage.is_empty(),
            "{ctx}: image usage {:?}, the access needs {image:?}",
            row.image_usage
        );
        assert!(
            row.buffer_usage == buffer || row.buffer_usage.is_empty(),
            "{ctx}: buffer usage {:?}, the access needs {buffer:?}",
            row.buffer_usage
        );
        assert!(
            !(row.image_usage.is_empty() && row.buffer_usage.is_empty())
                || (image.is_empty() && buffer.is_empty()),
            "{ctx}: usable on nothing"
        );
        // An image access has a layout; a buffer-only access has none.
        assert_eq!(
            row.layout == L::UNDEFINED,
            row.image_usage.is_empty() && !row.buffer_usage.is_empty(),
            "{ctx}: layout {:?}",
            row.layout
        );

        // Queue: the stored requirement only narrows what the stages allow (one source of
        // truth: a requirement the stages already imply is not stored), and some queue of a
        // graphics+compute+transfer family runs the row.
        let by_stages = capabilities_for(row.stages);
        if !row.queue.is_empty() {
            assert_ne!(row.queue, by_stages, "{ctx}: the stages already say so");
            assert!(
                by_stages.is_empty() || by_stages.contains(row.queue),
                "{ctx}: needs {:?}, its stages run on {by_stages:?}",
                row.queue
            );
        }
        assert!(
            QUEUE_KINDS.iter().any(|&caps| row.access().runs_on(caps)),
            "{ctx}"
        );
    }
}

#[test]
fn names_say_whether_a_row_writes() {
    let mut neither = Vec::new();
    for row in ACCESS_TABLE {
        let a = row.access();
        if row.name.contains("WRITE") {
            assert!(a.is_write(), "{}", row.name);
        } else if row.name.contains("READ") {
            assert!(!a.is_write(), "{}", row.name);
        } else {
            neither.push((row.name, a.is_write()));
        }
    }
    // The names that say neither, looked at one by one.
    assert_eq!(
        neither,
        [
            ("VERTEX_BUFFER", false),
            ("INDEX_BUFFER", false),
            ("INDIRECT_BUFFER", false),
            ("PRESENT", false),
            ("GENERAL", true),
        ]
    );
}

#[test]
fn names_are_unique_and_each_constant_is_its_row() {
    let names: HashSet<&str> = ACCESS_TABLE.iter().map(|r| r.name).collect();
    assert_eq!(names.len(), ACCESS_TABLE.len());
    // No two rows are the same access under two names: the value finds its own row back.
    for row in ACCESS_TABLE {
        assert_eq!(row.access().name(), Some(row.name));
        assert_eq!(AccessRow::find(row.name), Some(row));
    }
    let constants = [
        ("TRANSFER_READ", Access::TRANSFER_READ),
        ("COPY_WRITE", Access::COPY_WRITE),
        ("BLIT_READ", Access::BLIT_READ),
        ("CLEAR_COLOR_WRITE", Access::CLEAR_COLOR_WRITE),
        ("DEPTH_READ_ONLY_SAMPLED", Access::DEPTH_READ_ONLY_SAMPLED),
        ("GENERAL", Access::GENERAL),
    ];
    for (name, a) in constants {
        assert_eq!(
            AccessRow::find(name).map(AccessRow::access),
            Some(a),
            "{name}"
        );
    }
}

#[test]
fn the_rows_the_stock_passes_used_to_build_by_hand() {
    // passes/src/{copy,blit,clear,mipmaps}.rs built these from TRANSFER_READ/WRITE.
    let at = |mut a: Access, s: S, q: Q| {
        a.stages = s;
        a.queue = q;
        a
    };
    let gfx = Q::GRAPHICS;
    assert_eq!(
        Access::COPY_READ,
        at(Access::TRANSFER_READ, S::COPY, Q::empty())
    );
    assert_eq!(
        Access::COPY_WRITE,
        at(Access::TRANSFER_WRITE, S::COPY, Q::empty())
    );
    assert_eq!(
        Access::DEPTH_STENCIL_COPY_WRITE,
        Access {
            buffer_usage: BU::empty(),
            ..at(Access::TRANSFER_WRITE, S::COPY, gfx)
        }
    );
    assert_eq!(
        Access::BLIT_READ,
        Access {
            buffer_usage: BU::empty(),
            ..at(Access::TRANSFER_READ, S::BLIT, gfx)
        }
    );
    assert_eq!(
        Access::CLEAR_COLOR_WRITE,
        Access {
            buffer_usage: BU::empty(),
            ..at(Access::TRANSFER_WRITE, S::CLEAR, gfx | Q::COMPUTE)
        }
    );
    let chain = Access::MIP_CHAIN_BLIT_READ_WRITE;
    assert_eq!(chain.access, A::TRANSFER_READ | A::TRANSFER_WRITE);
    assert_eq!(chain.layout, L::TRANSFER_SRC_OPTIMAL);
    assert_eq!(chain.image_usage, IU::TRANSFER_SRC | IU::TRANSFER_DST);
}

#[test]
fn queues_follow_the_command_and_the_stages() {
    let gct = Q::GRAPHICS | Q::COMPUTE | Q::TRANSFER;
    let ct = Q::COMPUTE | Q::TRANSFER;
    let cases = [
        (Access::COPY_WRITE, [true, true, true]),
        (Access::DEPTH_STENCIL_COPY_WRITE, [true, false, false]),
        (Access::BLIT_WRITE, [true, false, false]),
        (Access::RESOLVE_READ, [true, false, false]),
        (Access::CLEAR_COLOR_WRITE, [true, true, false]),
        (Access::CLEAR_DEPTH_STENCIL_WRITE, [true, false, false]),
        (Access::COMPUTE_SHADER_WRITE, [true, true, false]),
        (Access::FRAGMENT_SHADER_STORAGE_WRITE, [true, false, false]),
        (Access::COMPUTE_SHADER_UNIFORM_READ, [true, true, false]),
        (Access::UNIFORM_READ, [true, true, false]),
        (Access::INDIRECT_BUFFER, [true, true, false]),
        (Access::DEPTH_READ_ONLY_SAMPLED, [true, false, false]),
        (Access::HOST_READ, [true, true, true]),
        (Access::PRESENT, [true, true, true]),
    ];
    for (a, expect) in cases {
        let got = [gct, ct, Q::TRANSFER].map(|caps| a.runs_on(caps));
        assert_eq!(got, expect, "{:?}", a.name());
    }
    assert_eq!(Access::BLIT_READ.queue_capabilities(), Q::GRAPHICS);
    assert_eq!(
        Access::UNIFORM_READ.queue_capabilities(),
        Q::GRAPHICS | Q::COMPUTE
    );
    assert_eq!(Access::GENERAL.queue_capabilities(), Q::empty());
}

#[test]
fn reads_and_writes_are_classified() {
    assert!(Access::TRANSFER_WRITE.is_write());
    assert!(!Access::TRANSFER_READ.is_write());
    assert!(Access::COMPUTE_SHADER_READ_WRITE.is_write());
    assert!(!Access::FRAGMENT_SHADER_SAMPLED_READ.is_write());
    assert!(!Access::PRESENT.is_write());
    assert_eq!(
        Access::COLOR_ATTACHMENT_READ_WRITE.write_bits(),
        A::COLOR_ATTACHMENT_WRITE
    );
}

/// The lines each access constant's rustdoc ends with: what the row stands for in Vulkan's
/// terms.
fn summary_lines(row: &crate::access::AccessRow) -> [String; 3] {
    let layout = if row.layout == L::UNDEFINED {
        "none (buffers only)".to_owned()
    } else {
        format!("`{:?}`", row.layout)
    };
    [
        format!("/// - stages: `{:?}`", row.stages),
        format!("/// - access: `{:?}`", row.access),
        format!("/// - layout: {layout}"),
    ]
}

/// Every row's documentation ends with its stages, access flags and layout as the table
/// holds them (a blank doc line, then [`summary_lines`]), so rustdoc shows each constant's
/// meaning in Vulkan's terms and the text cannot drift from the values.
#[test]
fn every_access_constant_documents_its_stages_access_and_layout() {
    let source = concat!(
        include_str!("table/raster_compute.rs"),
        include_str!("table/ray_mesh_video.rs")
    );
    let mut wrong = Vec::new();
    for row in ACCESS_TABLE {
        let at = source
            .find(&format!("    {} {{", row.name))
            .unwrap_or_else(|| panic!("{}: no row in table.rs", row.name));
        let docs: Vec<&str> = source[..at].lines().rev().take(4).map(str::trim).collect();
        let [stages, access, layout] = summary_lines(row);
        if docs != [layout.as_str(), access.as_str(), stages.as_str(), "///"] {
            wrong.push(format!("{}:\n{stages}\n{access}\n{layout}", row.name));
        }
    }
    assert!(
        wrong.is_empty(),
        "rows whose docs do not end with their summary:\n{}",
        wrong.join("\n")
    );
}
