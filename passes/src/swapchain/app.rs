//! A swapchain the app made itself: its images wrapped as [`StImage`]s, and the stock acquire
//! and present passes on the app's own semaphores. The app keeps its `VkSwapchainKHR`, calls
//! `vkAcquireNextImageKHR` and `vkQueuePresentKHR` itself, and recreates the swapchain as it
//! always did; the graph does the waits, the layout transitions and the signals.
//!
//! ```no_run
//! # fn f(ctx: &vk_baton_context::Context, device: &ash::Device, swapchain_fn: &ash::khr::swapchain::Device,
//! #      swapchain: ash::vk::SwapchainKHR, format: ash::vk::Format, extent: ash::vk::Extent2D,
//! #      acquired: ash::vk::Semaphore, rendered: &[ash::vk::Semaphore],
//! #      render: &mut dyn vk_baton::Pass) -> vk_baton_passes::Result<()> {
//! use ash::vk;
//! use vk_baton::ResourceState;
//! use vk_baton_passes::{wrap_swapchain_images, SwapchainAcquire, SwapchainPresent};
//! // SAFETY: the swapchain's images, made with this format, extent and usage, not used yet;
//! // the app destroys the swapchain only after the wrappers are gone.
//! let images = unsafe {
//!     let raw = swapchain_fn.get_swapchain_images(swapchain).unwrap();
//!     wrap_swapchain_images(device, &raw, format, extent,
//!         vk::ImageUsageFlags::COLOR_ATTACHMENT, ResourceState::undefined())
//! };
//! // SAFETY: `acquired` is unsignalled with nothing pending.
//! let (index, _) = unsafe { swapchain_fn.acquire_next_image(swapchain, u64::MAX, acquired, vk::Fence::null()) }.unwrap();
//! let image = images[index as usize].clone();
//! // SAFETY: `acquired` was given to the acquire that returned `image`, and `rendered[index]`
//! // is unsignalled, waited on by the present below; both outlive the execution.
//! let (mut acquire, mut present) = unsafe {
//!     (SwapchainAcquire::from_raw(acquired, image.clone()),
//!      SwapchainPresent::from_raw(rendered[index as usize], image))
//! };
//! let graph = ctx.graph()?;
//! let fence = graph.record()
//!     .insert_pass("acquire", &mut acquire, ctx.graphics())
//!     .insert_pass("render", render, ctx.graphics())
//!     .insert_pass("present", &mut present, ctx.graphics())
//!     .finish()?.execute()?;
//! let waits = [rendered[index as usize]];
//! let (swapchains, indices) = ([swapchain], [index]);
//! let info = vk::PresentInfoKHR::default().wait_semaphores(&waits).swapchains(&swapchains).image_indices(&indices);
//! // The graph submits to this queue too: present under its lock.
//! let lock = ctx.graphics().lock();
//! // SAFETY: the queue's lock is held; the graph's submit signals `waits[0]`.
//! let _ = unsafe { swapchain_fn.queue_present(lock.handle(), &info) };
//! # drop(fence); Ok(()) }
//! ```

use super::*;

/// Wraps the images of a swapchain the app made (`vkGetSwapchainImagesKHR`) as [`StImage`]s
/// named "swapchain image N", in the state `state` (`ResourceState::undefined()` for a new
/// swapchain). The swapchain owns them ([`Destroy::AppKeeps`]).
///
/// ```no_run
/// # fn f(device: &ash::Device, raw: &[ash::vk::Image]) {
/// use vk_baton::{ash::vk, ResourceState};
/// let extent = vk::Extent2D { width: 800, height: 600 };
/// // SAFETY: as the `# Safety` section says.
/// let images = unsafe {
///     vk_baton_passes::wrap_swapchain_images(device, raw, vk::Format::B8G8R8A8_SRGB, extent,
///         vk::ImageUsageFlags::COLOR_ATTACHMENT, ResourceState::undefined())
/// };
/// assert_eq!(images.len(), raw.len());
/// # }
/// ```
///
/// # Safety
///
/// As for [`StImage::from_raw`]: each image is an image of `device`'s swapchain, created with
/// `format`, `extent` and `usage` (one mip, one layer, EXCLUSIVE sharing), and `state` is true
/// of it; the app destroys the swapchain only once every wrapper (and every execution that
/// uses one) is gone, and uses the images only through graphs after this.
pub unsafe fn wrap_swapchain_images(
    device: &ash::Device,
    images: &[vk::Image],
    format: vk::Format,
    extent: vk::Extent2D,
    usage: vk::ImageUsageFlags,
    state: ResourceState,
) -> Vec<Arc<StImage>> {
    let desc = ImageDesc::new_2d(extent.width, extent.height, format, usage);
    images
        .iter()
        .enumerate()
        .map(|(i, &img)| {
            // SAFETY: as the caller vouches.
            Arc::new(unsafe {
                StImage::from_raw(
                    device,
                    img,
                    desc.clone(),
                    &format!("swapchain image {i}"),
                    state.clone(),
                    Destroy::AppKeeps,
                )
            })
        })
        .collect()
}

impl SwapchainAcquire {
    /// The acquire pass for a swapchain the app made and acquires from itself: waits on the
    /// app's `semaphore` before the first use of `image`, whose contents are undefined after
    /// the wait. The app does the semaphore bookkeeping the stock [`Swapchain`] does (see the
    /// [module docs](super)).
    ///
    /// # Safety
    ///
    /// The library submits the raw handle and cannot check it: `semaphore` is a binary
    /// semaphore of the graph's device, passed to the `vkAcquireNextImageKHR` that returned
    /// `image`'s index, waited on by no other submit, and alive until the execution that
    /// runs this pass completes; the pass runs in one execution only.
    pub unsafe fn from_raw(semaphore: vk::Semaphore, image: Arc<StImage>) -> SwapchainAcquire {
        SwapchainAcquire {
            slot: 0,
            semaphore,
            image,
            shared: None,
        }
    }
}

impl SwapchainPresent {
    /// The present pass for a swapchain the app made and presents itself: the graph moves
    /// `image` to PRESENT_SRC_KHR (or finds it there, after a render pass whose `finalLayout`
    /// is that), and signals the app's `semaphore`, which the app's `vkQueuePresentKHR` then
    /// waits on.
    ///
    /// The app presents on the queue this pass was inserted on. If the library also submits
    /// to that queue (it does: this pass's graph did), `vkQueuePresentKHR` must go through
    /// [`Queue::lock`](vk_baton::Queue::lock): access to a `VkQueue` needs external
    /// synchronization, and the lock is what the library's submits take.
    ///
    /// # Safety
    ///
    /// The library submits the raw handle and cannot check it: `semaphore` is a binary
    /// semaphore of the graph's device, unsignalled with no signal pending when the graph
    /// executes, waited on by the present that follows, and alive until then.
    pub unsafe fn from_raw(semaphore: vk::Semaphore, image: Arc<StImage>) -> SwapchainPresent {
        SwapchainPresent {
            index: 0,
            semaphore,
            image,
            shared: None,
        }
    }
}
