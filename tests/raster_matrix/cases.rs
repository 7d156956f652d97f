//! The matrix itself, with no Vulkan objects: the writes and reads, which pairs are cases,
//! the data each case writes, what its read must give back (the CPU's model of the GPU), and
//! every pass's declared uses. The GPU tests (`gpu.rs`) and the simulation (`simulated.rs`)
//! both take their passes from [`passes`], so they plan the same declarations.

pub use super::resources::*;
use super::stencil;
use vk_baton::ash::vk;
use vk_baton::Access;

/// 8×8 targets and 64 words of data in every case.
pub const SIDE: u32 = 8;
pub const WORDS: usize = 64;
/// Instances of the depth-counting draw: a fragment of instance `j` lies at `(j + 0.5) / 256`.
pub const DEPTH_STEPS: u32 = 255;
pub const COLOR: vk::Format = vk::Format::R8G8B8A8_UNORM;
pub const DEPTH: vk::Format = vk::Format::D32_SFLOAT;
/// The image whose stencil is written apart from its depth.
pub const DEPTH_STENCIL: vk::Format = vk::Format::D32_SFLOAT_S8_UINT;
pub const RESULT: vk::Format = vk::Format::R32_UINT;

/// What a write leaves its data in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Buffer,
    Color,
    Depth,
    /// Depth and stencil, the stencil written apart (`stencil.rs`): word `k << 8 | s` holds
    /// depth `k / 256` and stencil `s`.
    Stencil,
}

/// The write operations, one row of the matrix each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Write {
    /// A color attachment, load op CLEAR, drawn over but for the diagonal.
    ColorClear,
    /// A color attachment cleared in an earlier pass, then load op LOAD with additive blending.
    ColorLoadBlend,
    /// A 4× multisampled color attachment resolved into the data image.
    Resolve,
    /// A depth attachment written by the fragment shader (`gl_FragDepth`).
    DepthAttachment,
    /// The stencil aspect of a depth/stencil attachment, written apart from depth: cleared,
    /// then REPLACEd by each point's own reference where a read-only depth test passes
    /// (`stencil.rs`).
    StencilAttachment,
    /// A storage buffer written by the fragment shader.
    FragmentStorage,
    /// A storage buffer written by the vertex shader.
    VertexStorage,
    /// `vkCmdCopyBuffer`.
    CopyBuffer,
    /// `vkCmdFillBuffer`.
    FillBuffer,
    /// A storage buffer written by a compute shader.
    ComputeBuffer,
    /// `vkCmdCopyBufferToImage`.
    CopyImage,
    /// `vkCmdClearColorImage`.
    ClearImage,
    /// A storage image written by a compute shader.
    ComputeImage,
}

pub const WRITES: [Write; 13] = [
    Write::ColorClear,
    Write::ColorLoadBlend,
    Write::Resolve,
    Write::DepthAttachment,
    Write::StencilAttachment,
    Write::FragmentStorage,
    Write::VertexStorage,
    Write::CopyBuffer,
    Write::FillBuffer,
    Write::ComputeBuffer,
    Write::CopyImage,
    Write::ClearImage,
    Write::ComputeImage,
];

impl Write {
    pub fn kind(self) -> Kind {
        use Write::*;
        match self {
            ColorClear | ColorLoadBlend | Resolve | CopyImage | ClearImage | ComputeImage => {
                Kind::Color
            }
            DepthAttachment => Kind::Depth,
            StencilAttachment => Kind::Stencil,
            FragmentStorage | VertexStorage | CopyBuffer | FillBuffer | ComputeBuffer => {
                Kind::Buffer
            }
        }
    }
}

/// The read operations, one column of the matrix each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Read {
    VertexBuffer,
    IndexBuffer,
    IndirectDraw,
    IndirectDispatch,
    UniformVertex,
    UniformFragment,
    StorageVertex,
    StorageFragment,
    SampledVertex,
    SampledFragment,
    /// A depth test against a read-only depth attachment (load LOAD, store NONE); of a
    /// depth/stencil image, on its depth aspect alone (`stencil.rs`).
    DepthTest,
    /// Stencil tests (EQUAL, one bit each) against a read-only depth/stencil attachment.
    StencilTest,
    /// `vkCmdCopyBuffer` or `vkCmdCopyImageToBuffer` into the readback buffer.
    Copy,
    /// `vkCmdBlitImage` into another image.
    Blit,
    /// A compute shader's storage read.
    ComputeStorage,
    /// A compute shader's sampled read.
    ComputeSampled,
}

/// The reads that can consume what a write of `kind` leaves. Sampled reads of buffers
/// (uniform texel buffers) are not in the matrix; nor are input attachments, which dynamic
/// rendering reads only with `VK_KHR_dynamic_rendering_local_read`, which vk-baton does not
/// plan for (`Access::FRAGMENT_SHADER_INPUT_ATTACHMENT_READ`). A depth image has no storage
/// reads (no depth format supports storage) and no blit (a blit into a depth image needs
/// `BLIT_DST` on a depth format, which Vulkan does not require). The stencil of a
/// depth/stencil image is read by a stencil test, a copy and sampled reads of its aspect, and
/// its depth by a depth test (`stencil.rs`).
pub fn reads_of(kind: Kind) -> &'static [Read] {
    use Read::*;
    match kind {
        Kind::Buffer => &[
            VertexBuffer,
            IndexBuffer,
            IndirectDraw,
            IndirectDispatch,
            UniformVertex,
            UniformFragment,
            StorageVertex,
            StorageFragment,
            ComputeStorage,
            Copy,
        ],
        Kind::Color => &[
            SampledVertex,
            SampledFragment,
            StorageVertex,
            StorageFragment,
            Copy,
            Blit,
            ComputeStorage,
            ComputeSampled,
        ],
        Kind::Depth => &[
            DepthTest,
            SampledVertex,
            SampledFragment,
            Copy,
            ComputeSampled,
        ],
        Kind::Stencil => &[
            StencilTest,
            DepthTest,
            SampledFragment,
            Copy,
            ComputeSampled,
        ],
    }
}

impl Read {
    /// The access the read declares on the data.
    pub fn access(self, kind: Kind) -> Access {
        use Read::*;
        match self {
            VertexBuffer => Access::VERTEX_BUFFER,
            IndexBuffer => Access::INDEX_BUFFER,
            IndirectDraw | IndirectDispatch => Access::INDIRECT_BUFFER,
            UniformVertex => Access::VERTEX_SHADER_UNIFORM_READ,
            UniformFragment => Access::FRAGMENT_SHADER_UNIFORM_READ,
            StorageVertex => Access::VERTEX_SHADER_STORAGE_READ,
            StorageFragment => Access::FRAGMENT_SHADER_STORAGE_READ,
            SampledVertex => Access::VERTEX_SHADER_SAMPLED_READ,
            SampledFragment => Access::FRAGMENT_SHADER_SAMPLED_READ,
            DepthTest | StencilTest => Access::DEPTH_ATTACHMENT_READ,
            Copy if matches!(kind, Kind::Depth | Kind::Stencil) => Access::DEPTH_STENCIL_COPY_READ,
            Copy => Access::COPY_READ,
            Blit => Access::BLIT_READ,
            ComputeStorage => Access::COMPUTE_SHADER_READ,
            ComputeSampled => Access::COMPUTE_SHADER_SAMPLED_READ,
        }
    }

    /// How the read's result reaches the readback buffer.
    pub fn output(self) -> Output {
        use Read::*;
        match self {
            DepthTest | StencilTest | Blit => Output::Image(COLOR),
            Copy => Output::Direct,
            IndirectDispatch | ComputeStorage | ComputeSampled => Output::Compute,
            _ => Output::Image(RESULT),
        }
    }
}

/// Where a read puts its result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// Into an 8×8 image of this format, copied to the readback buffer afterwards.
    Image(vk::Format),
    /// A compute shader writes the readback buffer.
    Compute,
    /// The read is the copy into the readback buffer.
    Direct,
}

/// One case: a write and a read of what it wrote.
#[derive(Clone, Copy, Debug)]
pub struct Pair {
    pub index: usize,
    pub write: Write,
    pub read: Read,
}

impl Pair {
    pub fn kind(&self) -> Kind {
        self.write.kind()
    }
    pub fn name(&self) -> String {
        format!("{:?} -> {:?}", self.write, self.read)
    }
}

/// Every case: each write with every read that can consume it.
pub fn pairs() -> Vec<Pair> {
    let mut out = Vec::new();
    for write in WRITES {
        for &read in reads_of(write.kind()) {
            out.push(Pair {
                index: out.len(),
                write,
                read,
            });
        }
    }
    out
}

/// Deterministic words for a case (xorshift64*).
fn rng(seed: u64) -> impl FnMut() -> u32 {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    move || {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        (s.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32) as u32
    }
}

/// The case's data, as its write and its read can take it: what the write puts in (the source
/// buffer for most writes; the fill value or clear colour for the others, in every word).
pub fn source(p: &Pair, frame: u32) -> Vec<u32> {
    let mut r = rng((p.index as u64) << 8 | frame as u64);
    let uniform = matches!(p.write, Write::FillBuffer | Write::ClearImage);
    let word = |i: usize, r: &mut dyn FnMut() -> u32| match (p.kind(), p.read) {
        (Kind::Depth, _) => ((r() % 256) as f32 / 256.0).to_bits(),
        (Kind::Stencil, _) => stencil::source_word(r),
        // Distinct slots in the top half (a permutation when not uniform), random low half.
        (_, Read::IndexBuffer) => ((i as u32 * 37 + r()) % 64) << 16 | (r() & 0xffff),
        (_, Read::IndirectDraw) => match i {
            0 => 1 + r() % 64,    // vertex count
            1 => 1 + r() % 3,     // instance count
            2 => r() % (1 << 20), // first vertex
            3 => r() % 200,       // first instance
            _ => r(),
        },
        (_, Read::IndirectDispatch) if i < 3 => 1 + r() % 4,
        _ if p.write == Write::ColorLoadBlend => r() & 0x7f7f_7f7f,
        _ => r(),
    };
    if uniform {
        let v = word(if p.read == Read::IndirectDraw { 1 } else { 0 }, &mut r);
        return vec![v; WORDS];
    }
    let mut out: Vec<u32> = (0..WORDS).map(|i| word(i, &mut r)).collect();
    if p.read == Read::IndexBuffer {
        // Make the slots a permutation: slot i << 16 at a shuffled position.
        let perm: Vec<u32> = (0..WORDS as u32).map(|i| (i * 37 + 11) % 64).collect();
        for (w, s) in out.iter_mut().zip(perm) {
            *w = s << 16 | (*w & 0xffff);
        }
    }
    out
}

/// The clear colour of a colour write (the diagonal keeps it) and the base a LOAD blends onto.
pub fn clear_color(p: &Pair) -> u32 {
    let c = 0x0102_0304u32.wrapping_mul(p.index as u32 + 1);
    if p.write == Write::ColorLoadBlend {
        c & 0x7f7f_7f7f
    } else {
        c
    }
}

/// What the data holds after the write.
pub fn content(p: &Pair, src: &[u32]) -> Vec<u32> {
    let c = clear_color(p);
    (0..WORDS)
        .map(|i| match p.write {
            Write::ColorClear | Write::Resolve if i % 9 == 0 => c,
            Write::ColorLoadBlend => add_bytes(src[i], c),
            Write::StencilAttachment => stencil::written(p, src[i]),
            _ => src[i],
        })
        .collect()
}

fn add_bytes(a: u32, b: u32) -> u32 {
    let (a, b) = (a.to_le_bytes(), b.to_le_bytes());
    u32::from_le_bytes([0, 1, 2, 3].map(|k| a[k] + b[k]))
}

/// What the read gives back from data holding `c` (the readback's 64 words).
pub fn expected(p: &Pair, c: &[u32]) -> Vec<u32> {
    if p.kind() == Kind::Stencil {
        return stencil::expected(p, c);
    }
    let mut out = vec![0u32; WORDS];
    match p.read {
        Read::IndexBuffer => {
            for &v in c {
                if let Some(o) = out.get_mut((v >> 16) as usize) {
                    *o = v;
                }
            }
        }
        Read::IndirectDraw => {
            let (count, instances, first, first_instance) = (c[0], c[1], c[2], c[3]);
            for j in 0..instances {
                for k in 0..count {
                    let vi = first.wrapping_add(k);
                    out[(vi % 64) as usize] = vi.wrapping_add(first_instance.wrapping_add(j) << 24);
                }
            }
        }
        Read::IndirectDispatch => {
            let n = [c[0], c[1], c[2]];
            for w in 0..n[0] * n[1] * n[2] {
                out[w as usize] = n[0] | n[1] << 8 | n[2] << 16 | (w + 1) << 24;
            }
        }
        Read::DepthTest => {
            for (o, &d) in out.iter_mut().zip(c) {
                let d = f32::from_bits(d);
                *o = (0..DEPTH_STEPS)
                    .filter(|&j| (j as f32 + 0.5) / 256.0 < d)
                    .count() as u32;
            }
        }
        _ => out.copy_from_slice(c),
    }
    out
}

/// The resources of a case, by role.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Slot {
    /// Host-written: what the write copies or draws from.
    Src,
    /// What the write writes and the read reads.
    Data,
    /// The multisampled image a resolve resolves from.
    Msaa,
    /// The target of the storage writes' draws.
    Scratch,
    /// The read's result image.
    Out,
    /// Host-read: the read's result.
    Readback,
    /// Host-read: what the middle pass read (placements across families).
    MidReadback,
}

/// Which queue a pass goes to: placements map these onto queues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Writer,
    Middle,
    Reader,
}

/// What a pass records (`gpu.rs` builds it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rec {
    /// The clear before a LOAD.
    Base,
    Write(Write),
    /// A compute read on another family, into the middle readback.
    Middle,
    Read(Read),
    /// Copies the result image into the readback buffer.
    Readback,
    /// The host reads this readback buffer after the fence.
    Host(Slot),
}

/// One pass of a case and what it declares: for the stock `Render` passes, a restatement of
/// what `Render::declare` declares for its targets (passes/src/render.rs), then its `reads`.
#[derive(Clone, Debug)]
pub struct PassSpec {
    pub name: String,
    pub role: Role,
    pub rec: Rec,
    pub uses: Vec<UseSpec>,
}

/// A declared use: the slot, its access, whether it discards the old contents, and the aspect
/// it is narrowed to (empty: every aspect of the image).
#[derive(Clone, Copy, Debug)]
pub struct UseSpec {
    pub slot: Slot,
    pub access: Access,
    pub discard: bool,
    pub aspect: vk::ImageAspectFlags,
}

pub fn spec(p: &Pair, what: &str, role: Role, rec: Rec, uses: &[(Slot, Access, bool)]) -> PassSpec {
    let uses = uses.iter().map(|&(slot, access, discard)| UseSpec {
        slot,
        access,
        discard,
        aspect: vk::ImageAspectFlags::empty(),
    });
    PassSpec {
        name: format!("{} #{}: {what}", p.name(), p.index),
        role,
        rec,
        uses: uses.collect(),
    }
}

/// The write's passes.
pub fn write_passes(p: &Pair) -> Vec<PassSpec> {
    use Slot::*;
    use Write as W;
    let (d, s) = (Data, Src);
    let w =
        |uses: &[(Slot, Access, bool)]| spec(p, "write", Role::Writer, Rec::Write(p.write), uses);
    let fs_src = (s, Access::FRAGMENT_SHADER_STORAGE_READ, false);
    match p.write {
        W::ColorClear => vec![w(&[(d, Access::COLOR_ATTACHMENT_WRITE, true), fs_src])],
        W::ColorLoadBlend => vec![
            spec(
                p,
                "base",
                Role::Writer,
                Rec::Base,
                &[(d, Access::COLOR_ATTACHMENT_WRITE, true)],
            ),
            w(&[(d, Access::COLOR_ATTACHMENT_READ_WRITE, false), fs_src]),
        ],
        W::Resolve => vec![w(&[
            (Msaa, Access::COLOR_ATTACHMENT_WRITE, true),
            (d, Access::COLOR_ATTACHMENT_WRITE, true),
            fs_src,
        ])],
        W::DepthAttachment => vec![w(&[(d, Access::DEPTH_ATTACHMENT_WRITE, true), fs_src])],
        W::StencilAttachment => stencil::write_passes(p),
        W::FragmentStorage => vec![w(&[
            (Scratch, Access::COLOR_ATTACHMENT_WRITE, true),
            fs_src,
            (d, Access::FRAGMENT_SHADER_STORAGE_WRITE, false),
        ])],
        W::VertexStorage => vec![w(&[
            (Scratch, Access::COLOR_ATTACHMENT_WRITE, true),
            (s, Access::VERTEX_SHADER_STORAGE_READ, false),
            (d, Access::VERTEX_SHADER_STORAGE_WRITE, false),
        ])],
        W::CopyBuffer | W::CopyImage => vec![w(&[
            (s, Access::COPY_READ, false),
            (d, Access::COPY_WRITE, true),
        ])],
        W::FillBuffer => vec![w(&[(d, Access::TRANSFER_WRITE, true)])],
        W::ClearImage => vec![w(&[(d, Access::CLEAR_COLOR_WRITE, true)])],
        W::ComputeBuffer | W::ComputeImage => vec![w(&[
            (s, Access::COMPUTE_SHADER_READ, false),
            (d, Access::COMPUTE_SHADER_WRITE, true),
        ])],
    }
}

/// The middle pass's access to the data: a compute read of it.
pub fn middle_access(kind: Kind) -> Access {
    match kind {
        Kind::Buffer | Kind::Color => Access::COMPUTE_SHADER_READ,
        Kind::Depth | Kind::Stencil => Access::COMPUTE_SHADER_SAMPLED_READ,
    }
}

/// The middle passes (placements across families): a compute read of the data on the other
/// family into its own readback buffer, and the host's read of that.
pub fn middle_passes(p: &Pair) -> Vec<PassSpec> {
    use Slot::*;
    vec![
        spec(
            p,
            "middle",
            Role::Middle,
            Rec::Middle,
            &[
                (Data, middle_access(p.kind()), false),
                (MidReadback, Access::COMPUTE_SHADER_WRITE, true),
            ],
        ),
        spec(
            p,
            "middle host read",
            Role::Middle,
            Rec::Host(MidReadback),
            &[(MidReadback, Access::HOST_READ, false)],
        ),
    ]
}

/// The read's passes, up to the host's read of the result.
pub fn read_passes(p: &Pair) -> Vec<PassSpec> {
    use Slot::*;
    let data = (Data, p.read.access(p.kind()), false);
    let r = |uses: &[(Slot, Access, bool)]| spec(p, "read", Role::Reader, Rec::Read(p.read), uses);
    let mut out = vec![match (p.read, p.read.output()) {
        (Read::Blit, _) => r(&[data, (Out, Access::BLIT_WRITE, true)]),
        (_, Output::Image(_)) => r(&[(Out, Access::COLOR_ATTACHMENT_WRITE, true), data]),
        // A copy of the stencil aspect writes 64 bytes: the rest stay as the host wrote them.
        (_, Output::Direct) => r(&[
            data,
            (Readback, Access::COPY_WRITE, p.kind() != Kind::Stencil),
        ]),
        // The dispatch writes only the words of its workgroups: the rest stay as the host
        // wrote them.
        (Read::IndirectDispatch, _) => r(&[data, (Readback, Access::COMPUTE_SHADER_WRITE, false)]),
        (_, Output::Compute) => r(&[data, (Readback, Access::COMPUTE_SHADER_WRITE, true)]),
    }];
    stencil::narrow_read(p, &mut out[0]);
    if let Output::Image(_) = p.read.output() {
        out.push(spec(
            p,
            "readback",
            Role::Reader,
            Rec::Readback,
            &[
                (Out, Access::COPY_READ, false),
                (Readback, Access::COPY_WRITE, true),
            ],
        ));
    }
    out.push(spec(
        p,
        "host read",
        Role::Reader,
        Rec::Host(Readback),
        &[(Readback, Access::HOST_READ, false)],
    ));
    out
}
