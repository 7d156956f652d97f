//! Present fences (`VK_EXT_swapchain_maintenance1`): one `VkFence` per swapchain image,
//! signalled by each present of that image once the presentation engine holds what the
//! present uses (the image and the wait semaphore). Without them nothing says when a present's
//! semaphore wait is done or a retired swapchain may be destroyed; `vkDeviceWaitIdle` does not
//! cover the presentation engine.

use crate::error::{Error, Result};
use ash::vk;

/// One fence per image, and whether a present that signals it was queued and not yet waited
/// for.
pub(super) struct PresentFences {
    device: ash::Device,
    fences: Vec<vk::Fence>,
    pending: Vec<bool>,
}

impl PresentFences {
    /// Fences for `images` swapchain images, unsignalled.
    pub(super) fn new(device: &ash::Device, images: usize) -> Result<Self> {
        let mut out = PresentFences {
            device: device.clone(),
            fences: Vec::with_capacity(images),
            pending: vec![false; images],
        };
        for _ in 0..images {
            // SAFETY: plain object creation on a live device; on failure `out` destroys the
            // fences made so far.
            let fence = unsafe { device.create_fence(&vk::FenceCreateInfo::default(), None) }
                .map_err(|e| Error::vk("vkCreateFence", e))?;
            out.fences.push(fence);
        }
        Ok(out)
    }

    /// The fence for a present of image `index`, unsignalled and free: the last present of the
    /// image, if one is still pending, is waited for first (it is done already once the image
    /// was acquired again, so this does not block in practice).
    pub(super) fn for_present(&mut self, index: usize) -> Result<vk::Fence> {
        let fence = *self
            .fences
            .get(index)
            .ok_or_else(|| Error::Swapchain(format!("no present fence for image {index}")))?;
        if self.pending[index] {
            // SAFETY: a fence of this device with a pending signal from a present.
            unsafe { self.device.wait_for_fences(&[fence], true, u64::MAX) }
                .map_err(|e| Error::vk("vkWaitForFences", e))?;
            // SAFETY: signalled, with no other pending use.
            unsafe { self.device.reset_fences(&[fence]) }
                .map_err(|e| Error::vk("vkResetFences", e))?;
            self.pending[index] = false;
        }
        Ok(fence)
    }

    /// Records what `vkQueuePresentKHR` of image `index` returned: the present's queue
    /// operations were enqueued (its fence will signal) unless it failed for lack of memory or
    /// a lost device, which leave every synchronization object as it was.
    pub(super) fn presented(
        &mut self,
        index: usize,
        result: std::result::Result<bool, vk::Result>,
    ) {
        let enqueued = !matches!(
            result,
            Err(vk::Result::ERROR_OUT_OF_HOST_MEMORY
                | vk::Result::ERROR_OUT_OF_DEVICE_MEMORY
                | vk::Result::ERROR_DEVICE_LOST)
        );
        if let Some(p) = self.pending.get_mut(index) {
            *p = enqueued;
        }
    }

    /// Waits for every pending present: afterwards the presentation engine holds nothing of
    /// the swapchain's semaphores, and the swapchain may be destroyed. Returns how many
    /// presents were waited for.
    pub(super) fn wait_all(&mut self) -> Result<usize> {
        let pending: Vec<vk::Fence> = (self.fences.iter().zip(&self.pending))
            .filter(|(_, &p)| p)
            .map(|(&f, _)| f)
            .collect();
        if !pending.is_empty() {
            // SAFETY: fences of this device, each with a pending signal from a present.
            unsafe { self.device.wait_for_fences(&pending, true, u64::MAX) }
                .map_err(|e| Error::vk("vkWaitForFences", e))?;
        }
        self.pending.iter_mut().for_each(|p| *p = false);
        Ok(pending.len())
    }
}

impl Drop for PresentFences {
    fn drop(&mut self) {
        if let Err(e) = self.wait_all() {
            log::error!("waiting for the present fences before destroying them: {e}");
        }
        for &f in &self.fences {
            // SAFETY: no present that signals it is pending any more (waited above); a wait
            // that failed leaves the device lost, where destroying is still allowed.
            unsafe { self.device.destroy_fence(f, None) };
        }
    }
}
