//! The table itself: one row per named access. `access_table!` turns each row into an entry of
//! [`ACCESS_TABLE`] and an [`Access`] constant of the same name that reads that entry, so a row
//! is written once.
//!
//! The rows live in two files, one per part of the pipeline: [`raster_compute`] (transfers,
//! compute, vertex and fragment shaders, attachments, the host, present) and
//! [`ray_mesh_video`] (acceleration structures, ray tracing, mesh shaders, video coding).
//! [`ACCESS_TABLE`] is the two, in that order.

use super::Access;
use ash::vk;
use vk::AccessFlags2 as A;
use vk::BufferUsageFlags as BU;
use vk::ImageLayout as L;
use vk::ImageUsageFlags as IU;
use vk::PipelineStageFlags2 as S;
use vk::QueueFlags as Q;

/// One row of [`ACCESS_TABLE`]: a named access and everything it implies.
///
/// ```
/// use vk_baton::{access::AccessRow, ash::vk, Access};
/// let row = AccessRow::find("BLIT_READ").unwrap();
/// assert_eq!(row.stages, vk::PipelineStageFlags2::BLIT);
/// assert_eq!(row.layout, vk::ImageLayout::TRANSFER_SRC_OPTIMAL);
/// assert_eq!(row.queue, vk::QueueFlags::GRAPHICS); // vkCmdBlitImage needs a graphics queue
/// assert!(row.buffer_usage.is_empty()); // images only
/// assert_eq!(row.access(), Access::BLIT_READ);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct AccessRow {
    /// The name, which is also the name of the [`Access`] constant.
    pub name: &'static str,
    /// Pipeline stages that perform the access.
    pub stages: vk::PipelineStageFlags2,
    /// Memory accesses performed.
    pub access: vk::AccessFlags2,
    /// The layout an image must be in (`UNDEFINED`: buffers only).
    pub layout: vk::ImageLayout,
    /// What the command needs of the queue beyond its stages: any one of these capabilities
    /// (empty: the stages decide, through [`super::supported_stages`]).
    pub queue: vk::QueueFlags,
    /// Usage an image must have been created with (empty: none, or buffers only).
    pub image_usage: vk::ImageUsageFlags,
    /// Usage a buffer must have been created with (empty: none, or images only).
    pub buffer_usage: vk::BufferUsageFlags,
}

impl AccessRow {
    /// The access this row stands for (the constant of the same name).
    ///
    /// ```
    /// use vk_baton::{access::ACCESS_TABLE, Access};
    /// assert_eq!(ACCESS_TABLE[0].access(), Access::TRANSFER_READ);
    /// ```
    pub const fn access(&self) -> Access {
        Access {
            stages: self.stages,
            access: self.access,
            layout: self.layout,
            queue: self.queue,
            image_usage: self.image_usage,
            buffer_usage: self.buffer_usage,
        }
    }

    /// The row named `name`.
    ///
    /// ```
    /// use vk_baton::access::AccessRow;
    /// assert!(AccessRow::find("COPY_WRITE").unwrap().access().is_write());
    /// assert!(AccessRow::find("copy_write").is_none());
    /// ```
    pub fn find(name: &str) -> Option<&'static AccessRow> {
        ACCESS_TABLE.iter().find(|row| row.name == name)
    }
}

const fn st(bits: &[S]) -> S {
    let (mut m, mut i) = (0, 0);
    while i < bits.len() {
        m |= bits[i].as_raw();
        i += 1;
    }
    S::from_raw(m)
}

const fn ac(bits: &[A]) -> A {
    let (mut m, mut i) = (0, 0);
    while i < bits.len() {
        m |= bits[i].as_raw();
        i += 1;
    }
    A::from_raw(m)
}

const fn iu(bits: &[IU]) -> IU {
    let (mut m, mut i) = (0, 0);
    while i < bits.len() {
        m |= bits[i].as_raw();
        i += 1;
    }
    IU::from_raw(m)
}

const fn bu(bits: &[BU]) -> BU {
    let (mut m, mut i) = (0, 0);
    while i < bits.len() {
        m |= bits[i].as_raw();
        i += 1;
    }
    BU::from_raw(m)
}

const fn qf(bits: &[Q]) -> Q {
    let (mut m, mut i) = (0, 0);
    while i < bits.len() {
        m |= bits[i].as_raw();
        i += 1;
    }
    Q::from_raw(m)
}

/// Writes rows once: `NAME { field: value, ... }` rows (every field but `name`, which is the
/// constant's name) become the entries of the array `$rows`, in order, and the `Access`
/// constants that read them. `$positions` names the enum of their positions.
macro_rules! access_table {
    (enum $positions:ident; const $rows:ident; $(
        $(#[doc = $doc:literal])*
        $name:ident { $($field:ident: $value:expr),* $(,)? }
    )*) => {
        /// Positions in the rows, one per name.
        #[allow(non_camel_case_types, clippy::upper_case_acronyms)]
        enum $positions { $($name),* }

        pub(super) const $rows: [AccessRow; [$($positions::$name),*].len()] = [
            $(AccessRow { name: stringify!($name), $($field: $value),* }),*
        ];

        impl Access {
            $(
                $(#[doc = $doc])*
                pub const $name: Access = $rows[$positions::$name as usize].access();
            )*
        }
    };
}

const NO_IMAGE: IU = IU::empty();
const NO_BUFFER: BU = BU::empty();
const ANY_QUEUE: Q = Q::empty();

mod raster_compute;
mod ray_mesh_video;

/// The rows of both files, one after the other.
const fn concat<const N: usize>(a: &[AccessRow], b: &[AccessRow]) -> [AccessRow; N] {
    assert!(a.len() + b.len() == N);
    let mut out = [a[0]; N];
    let mut i = 0;
    while i < N {
        out[i] = if i < a.len() { a[i] } else { b[i - a.len()] };
        i += 1;
    }
    out
}

const ROWS: [AccessRow; raster_compute::ROWS.len() + ray_mesh_video::ROWS.len()] =
    concat(&raster_compute::ROWS, &ray_mesh_video::ROWS);

/// The access table: every named access, one row each, in the order of the [`Access`]
/// constants.
///
/// ```
/// use vk_baton::{access::ACCESS_TABLE, ash::vk::QueueFlags as Q};
/// // The named accesses a transfer-only queue can perform.
/// let transfer: Vec<&str> = ACCESS_TABLE
///     .iter()
///     .filter(|row| row.access().runs_on(Q::TRANSFER) && !row.access.is_empty())
///     .map(|row| row.name)
///     .collect();
/// assert!(transfer.contains(&"COPY_WRITE") && !transfer.contains(&"BLIT_WRITE"));
/// ```
pub static ACCESS_TABLE: &[AccessRow] = &ROWS;
