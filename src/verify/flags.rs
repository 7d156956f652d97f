//! Stage and access flag expansion, as the synchronization chapter defines it.
//!
//! Everything is reduced to *atomic* bits: stage bits that name one pipeline stage and access
//! bits that name one access type. Group bits are replaced by their members:
//!
//! - `ALL_COMMANDS`: every stage of every command (not `HOST`, which no command executes).
//! - `ALL_GRAPHICS`, `ALL_TRANSFER` (`COPY | BLIT | RESOLVE | CLEAR | ACCELERATION_STRUCTURE_COPY`),
//!   `VERTEX_INPUT` (`INDEX_INPUT | VERTEX_ATTRIBUTE_INPUT`) and `PRE_RASTERIZATION_SHADERS`: the
//!   stages the spec lists as equivalent.
//! - sync2 `TOP_OF_PIPE` is `NONE` in a first scope and `ALL_COMMANDS` in a second scope;
//!   `BOTTOM_OF_PIPE` is the reverse.
//! - `MEMORY_READ` / `MEMORY_WRITE`: every read / write access type; `SHADER_READ` is
//!   `SHADER_SAMPLED_READ | SHADER_STORAGE_READ | SHADER_BINDING_TABLE_READ`, `SHADER_WRITE` is
//!   `SHADER_STORAGE_WRITE`.
//!
//! Logically earlier/later stage ordering is deliberately not used: two masks meet only if they
//! share an atomic bit. That can only make the verifier stricter than the spec, never laxer.
//!
//! Without `VK_DEPENDENCY_QUEUE_FAMILY_OWNERSHIP_TRANSFER_USE_ALL_STAGES_BIT_KHR`, ownership
//! release and acquire operations run in [`OWNERSHIP_STAGE`], a stage that only an all-stages
//! mask contains (see `check.rs`).
//!
//! `ALL_COMMANDS` and `MEMORY_*` expand within a [`Universe`]: the atomic bits that anything in
//! the plans being checked names explicitly. Bits outside it cannot matter: no operation runs in
//! them and no other mask names them, so no intersection changes.

use ash::vk::{AccessFlags2 as A, PipelineStageFlags2 as S};

/// Which role a stage mask plays.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Scope {
    /// The stages an operation itself runs in.
    Op,
    /// A first synchronization scope (source stages, semaphore signal stages).
    First,
    /// A second synchronization scope (destination stages, semaphore wait stages).
    Second,
}

const ACCELERATION_STRUCTURE_COPY: u64 = 0x1000_0000;
const SHADER_BINDING_TABLE_READ: u64 = 0x100_0000_0000;

const STAGE_GROUPS: u64 = S::TOP_OF_PIPE.as_raw()
    | S::BOTTOM_OF_PIPE.as_raw()
    | S::ALL_COMMANDS.as_raw()
    | S::ALL_GRAPHICS.as_raw()
    | S::ALL_TRANSFER.as_raw()
    | S::VERTEX_INPUT.as_raw()
    | S::PRE_RASTERIZATION_SHADERS.as_raw();

const TRANSFER_MEMBERS: u64 = S::COPY.as_raw()
    | S::BLIT.as_raw()
    | S::RESOLVE.as_raw()
    | S::CLEAR.as_raw()
    | ACCELERATION_STRUCTURE_COPY;

const VERTEX_INPUT_MEMBERS: u64 = S::INDEX_INPUT.as_raw() | S::VERTEX_ATTRIBUTE_INPUT.as_raw();

const PRE_RASTER_MEMBERS: u64 = S::VERTEX_SHADER.as_raw()
    | S::TESSELLATION_CONTROL_SHADER.as_raw()
    | S::TESSELLATION_EVALUATION_SHADER.as_raw()
    | S::GEOMETRY_SHADER.as_raw()
    | S::TASK_SHADER_EXT.as_raw()
    | S::MESH_SHADER_EXT.as_raw();

const GRAPHICS_MEMBERS: u64 = S::DRAW_INDIRECT.as_raw()
    | VERTEX_INPUT_MEMBERS
    | PRE_RASTER_MEMBERS
    | S::FRAGMENT_SHADER.as_raw()
    | S::EARLY_FRAGMENT_TESTS.as_raw()
    | S::LATE_FRAGMENT_TESTS.as_raw()
    | S::COLOR_ATTACHMENT_OUTPUT.as_raw()
    | S::CONDITIONAL_RENDERING_EXT.as_raw()
    | S::TRANSFORM_FEEDBACK_EXT.as_raw()
    | S::FRAGMENT_SHADING_RATE_ATTACHMENT_KHR.as_raw()
    | S::FRAGMENT_DENSITY_PROCESS_EXT.as_raw();

const HOST: u64 = S::HOST.as_raw();

/// A stage of the verifier's own (bit 63, which no Vulkan stage flag uses): where an ownership
/// release or acquire runs when its barrier's stage masks do not apply to it. No stage mask
/// names it; `ALL_COMMANDS` (and sync2 `BOTTOM_OF_PIPE` in a first scope, `TOP_OF_PIPE` in a
/// second) contains it, so only an all-stages scope orders such an operation.
pub(super) const OWNERSHIP_STAGE: u64 = 1 << 63;

const ACCESS_GROUPS: u64 = A::MEMORY_READ.as_raw()
    | A::MEMORY_WRITE.as_raw()
    | A::SHADER_READ.as_raw()
    | A::SHADER_WRITE.as_raw();

/// Atomic access bits that write memory.
pub(super) const WRITES: u64 = A::SHADER_STORAGE_WRITE.as_raw()
    | A::COLOR_ATTACHMENT_WRITE.as_raw()
    | A::DEPTH_STENCIL_ATTACHMENT_WRITE.as_raw()
    | A::TRANSFER_WRITE.as_raw()
    | A::HOST_WRITE.as_raw()
    | A::ACCELERATION_STRUCTURE_WRITE_KHR.as_raw()
    | A::TRANSFORM_FEEDBACK_WRITE_EXT.as_raw()
    | A::TRANSFORM_FEEDBACK_COUNTER_WRITE_EXT.as_raw()
    | A::COMMAND_PREPROCESS_WRITE_NV.as_raw()
    | A::VIDEO_DECODE_WRITE_KHR.as_raw()
    | A::VIDEO_ENCODE_WRITE_KHR.as_raw()
    | A::MICROMAP_WRITE_EXT.as_raw()
    | A::OPTICAL_FLOW_WRITE_NV.as_raw();

/// Atomic stage bits of `m`, and whether it means "all commands".
fn stage_atoms(m: S, scope: Scope) -> (u64, bool) {
    let raw = m.as_raw();
    let mut all = raw & S::ALL_COMMANDS.as_raw() != 0;
    if raw & S::TOP_OF_PIPE.as_raw() != 0 && scope == Scope::Second {
        all = true;
    }
    if raw & S::BOTTOM_OF_PIPE.as_raw() != 0 && scope == Scope::First {
        all = true;
    }
    let mut b = raw & !STAGE_GROUPS & !OWNERSHIP_STAGE;
    if raw & S::ALL_GRAPHICS.as_raw() != 0 {
        b |= GRAPHICS_MEMBERS;
    }
    if raw & S::ALL_TRANSFER.as_raw() != 0 {
        b |= TRANSFER_MEMBERS;
    }
    if raw & S::VERTEX_INPUT.as_raw() != 0 {
        b |= VERTEX_INPUT_MEMBERS;
    }
    if raw & S::PRE_RASTERIZATION_SHADERS.as_raw() != 0 {
        b |= PRE_RASTER_MEMBERS;
    }
    (b, all)
}

/// Atomic access bits of `a`, and whether it means all reads / all writes.
fn access_atoms(a: A) -> (u64, bool, bool) {
    let raw = a.as_raw();
    let mut b = raw & !ACCESS_GROUPS;
    if raw & A::SHADER_READ.as_raw() != 0 {
        b |= A::SHADER_SAMPLED_READ.as_raw()
            | A::SHADER_STORAGE_READ.as_raw()
            | SHADER_BINDING_TABLE_READ;
    }
    if raw & A::SHADER_WRITE.as_raw() != 0 {
        b |= A::SHADER_STORAGE_WRITE.as_raw();
    }
    (
        b,
        raw & A::MEMORY_READ.as_raw() != 0,
        raw & A::MEMORY_WRITE.as_raw() != 0,
    )
}

/// The atomic bits named explicitly anywhere in the plans being checked.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Universe {
    /// Atomic stage bits.
    pub stages: u64,
    /// Atomic access bits.
    pub access: u64,
}

impl Universe {
    /// An empty universe but for one command stage, so that `ALL_COMMANDS` never expands to
    /// nothing (in a plan that names no stage but `ALL_COMMANDS`), and [`OWNERSHIP_STAGE`];
    /// and one read and one write access type, so that `MEMORY_READ` and `MEMORY_WRITE` never
    /// expand to nothing (a `MEMORY_WRITE` access in plans that name no other write would
    /// otherwise not write at all). Any extra real bit is sound: it only refines the partition.
    pub fn new() -> Self {
        Universe {
            stages: S::COMPUTE_SHADER.as_raw() | OWNERSHIP_STAGE,
            access: (A::SHADER_STORAGE_READ | A::SHADER_STORAGE_WRITE).as_raw(),
        }
    }

    /// Adds what `m` names explicitly.
    pub fn note_stages(&mut self, m: S) {
        // The scope does not change which atomic bits are named.
        self.stages |= stage_atoms(m, Scope::Op).0;
    }

    /// Adds what `a` names explicitly.
    pub fn note_access(&mut self, a: A) {
        self.access |= access_atoms(a).0;
    }

    /// `m` as atomic stage bits, for the given role.
    pub fn stages(&self, m: S, scope: Scope) -> u64 {
        let (b, all) = stage_atoms(m, scope);
        if all {
            b | (self.stages & !HOST)
        } else {
            b
        }
    }

    /// `a` as atomic access bits.
    pub fn access(&self, a: A) -> u64 {
        let (mut b, reads, writes) = access_atoms(a);
        if reads {
            b |= self.access & !WRITES;
        }
        if writes {
            b |= self.access & WRITES;
        }
        b
    }
}

/// Iterates the set bits of `m` as bit positions.
pub(super) fn bit_positions(mut m: u64) -> impl Iterator<Item = u32> {
    std::iter::from_fn(move || {
        if m == 0 {
            return None;
        }
        let b = m.trailing_zeros();
        m &= m - 1;
        Some(b)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_expand() {
        let mut u = Universe::default();
        u.note_stages(S::COMPUTE_SHADER | S::COPY | S::HOST);
        assert_eq!(
            u.stages(S::ALL_TRANSFER, Scope::Op) & S::COPY.as_raw(),
            S::COPY.as_raw()
        );
        // ALL_COMMANDS is every named stage but HOST.
        assert_eq!(
            u.stages(S::ALL_COMMANDS, Scope::Second),
            (S::COMPUTE_SHADER | S::COPY).as_raw()
        );
        // sync2 TOP/BOTTOM.
        assert_eq!(u.stages(S::TOP_OF_PIPE, Scope::First), 0);
        assert_eq!(
            u.stages(S::TOP_OF_PIPE, Scope::Second),
            (S::COMPUTE_SHADER | S::COPY).as_raw()
        );
        assert_eq!(u.stages(S::BOTTOM_OF_PIPE, Scope::Second), 0);
        assert_eq!(
            u.stages(S::BOTTOM_OF_PIPE, Scope::First),
            (S::COMPUTE_SHADER | S::COPY).as_raw()
        );
        assert_eq!(u.stages(S::VERTEX_INPUT, Scope::Op), VERTEX_INPUT_MEMBERS);
    }

    #[test]
    fn only_all_stages_masks_hold_the_ownership_stage() {
        let mut u = Universe::new();
        u.note_stages(S::COMPUTE_SHADER | S::COPY | S::from_raw(OWNERSHIP_STAGE));
        for (m, sc) in [
            (S::ALL_COMMANDS, Scope::First),
            (S::ALL_COMMANDS, Scope::Second),
            (S::BOTTOM_OF_PIPE, Scope::First),
            (S::TOP_OF_PIPE, Scope::Second),
        ] {
            assert_ne!(u.stages(m, sc) & OWNERSHIP_STAGE, 0, "{m:?} {sc:?}");
        }
        // Naming every stage of the universe one by one is not "all stages".
        for sc in [Scope::First, Scope::Second] {
            assert_eq!(
                u.stages(S::COMPUTE_SHADER | S::COPY | S::ALL_TRANSFER, sc) & OWNERSHIP_STAGE,
                0
            );
        }
        assert_eq!(u.stages(S::from_raw(OWNERSHIP_STAGE), Scope::Op), 0);
    }

    #[test]
    fn all_commands_is_never_empty() {
        let mut u = Universe::new();
        u.note_stages(S::ALL_COMMANDS);
        assert_ne!(u.stages(S::ALL_COMMANDS, Scope::Op), 0);
    }

    #[test]
    fn memory_read_and_write_are_never_empty() {
        let mut u = Universe::new();
        u.note_access(A::MEMORY_READ | A::MEMORY_WRITE | A::VERTEX_ATTRIBUTE_READ);
        assert_ne!(u.access(A::MEMORY_WRITE) & WRITES, 0);
        assert_ne!(u.access(A::MEMORY_READ) & !WRITES, 0);
    }

    #[test]
    fn access_groups_expand() {
        let mut u = Universe::default();
        u.note_access(A::TRANSFER_WRITE | A::SHADER_SAMPLED_READ | A::UNIFORM_READ);
        assert_eq!(u.access(A::MEMORY_WRITE), A::TRANSFER_WRITE.as_raw());
        assert_eq!(
            u.access(A::MEMORY_READ),
            (A::SHADER_SAMPLED_READ | A::UNIFORM_READ).as_raw()
        );
        // SHADER_READ does not include UNIFORM_READ.
        assert_eq!(u.access(A::SHADER_READ) & A::UNIFORM_READ.as_raw(), 0);
        assert_eq!(u.access(A::SHADER_WRITE), A::SHADER_STORAGE_WRITE.as_raw());
    }
}
