//! # vk-baton-passes
//!
//! The stock pass library for [`vk_baton`]: most apps need to write only their own shader
//! passes. Every pass declares exactly the accesses it makes (the narrowest named access, on
//! exactly the byte ranges and mip/layer ranges it touches) and records its commands; the
//! graph does every layout transition, barrier, ownership transfer and semaphore around it.
//!
//! | family | passes |
//! | --- | --- |
//! | [`copy`] | [`CopyBuffer`], [`CopyImage`], [`CopyBufferToImage`], [`CopyImageToBuffer`] |
//! | [`blit`] | [`ImageBlit`] (with [`FormatSupport`] checks) |
//! | [`mipmaps`] | [`GenerateMipmaps`] |
//! | [`upload`] | [`UploadBuffer`], [`UploadImage`] |
//! | [`stream`] | [`Uploader`] (a staging ring; many uploads in one [`UploadBatch`] pass), [`UploadTicket`] |
//! | [`download`] | [`DownloadBuffer`], [`DownloadImage`], read through [`Download`] |
//! | [`clear`] | [`ClearColor`], [`ClearDepthStencil`], [`FillBuffer`] |
//! | [`external`] | [`WaitExternal`], [`SignalExternal`] |
//! | [`compute`] | [`ComputeDispatch`] |
//! | [`render`] | [`Render`] (dynamic rendering from [`render::ColorTarget`]s and a [`render::DepthTarget`]) |
//! | [`swapchain`] | [`Swapchain`], [`SwapchainAcquire`], [`SwapchainPresent`] |
//!
//! Constructors check their input and return [`Error`] values; nothing here panics on bad
//! input.
//!
//! ```no_run
//! # fn main() -> vk_baton_passes::Result<()> {
//! use vk_baton::{ash::vk, BufferDesc};
//! use vk_baton_context::Context;
//! use vk_baton_passes::{DownloadBuffer, UploadBuffer};
//! let ctx = Context::new()?;
//! let buf = ctx.buffer(BufferDesc::new(16, vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST), "buf")?;
//! let mut up = UploadBuffer::new(ctx.device(), ctx.allocator(), buf.clone(), 0, &[7u8; 16])?;
//! let mut down = DownloadBuffer::whole(ctx.device(), ctx.allocator(), buf)?;
//! let bytes = down.handle();
//! let graph = ctx.graph()?;
//! graph.record()
//!     .insert_pass("up", &mut up, ctx.transfer())
//!     .insert_pass("down", &mut down, ctx.graphics())
//!     .finish()?.execute()?.wait()?;
//! assert_eq!(bytes.read()?, vec![7u8; 16]);
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

pub mod blit;
pub mod clear;
pub mod compute;
pub mod copy;
pub mod download;
pub mod error;
pub mod external;
pub mod format;
pub mod mipmaps;
pub mod render;
pub mod stream;
pub mod swapchain;
pub mod upload;
mod util;

pub use blit::ImageBlit;
pub use clear::{ClearColor, ClearDepthStencil, FillBuffer};
pub use compute::{ComputeDispatch, ShaderAccess};
pub use copy::{CopyBuffer, CopyBufferToImage, CopyImage, CopyImageToBuffer};
pub use download::{Download, DownloadBuffer, DownloadImage};
pub use error::{Error, Result};
pub use external::{SignalExternal, WaitExternal};
pub use format::FormatSupport;
pub use mipmaps::GenerateMipmaps;
pub use render::Render;
pub use stream::{UploadBatch, UploadTicket, Uploader};
pub use swapchain::{
    wrap_swapchain_images, AcquireOutcome, Frame, PresentOutcome, Swapchain, SwapchainAcquire,
    SwapchainConfig, SwapchainPresent,
};
pub use upload::{UploadBuffer, UploadImage};
