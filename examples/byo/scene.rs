//! The app's own `VkRenderPass`, as an existing renderer has one: it clears the scene image to
//! a colour that changes with the frame and clears a moving bar into it. Its attachment goes
//! from `initialLayout` UNDEFINED through COLOR_ATTACHMENT_OPTIMAL to `finalLayout`
//! TRANSFER_SRC_OPTIMAL (the blit to the swapchain reads it there), or, with `--direct`, it
//! draws straight into the acquired swapchain image and ends in PRESENT_SRC_KHR. It is made
//! with the external dependencies of `vk_baton::render_pass`, so its transitions chain with the
//! graph's barriers (and, after the move to PRESENT_SRC_KHR, with the present's signal, which
//! the graph puts at ALL_COMMANDS to take that move in).

use vk_baton::ash::{self, vk};
use vk_baton::{Access, StImage};

/// The render pass's layouts, declared to the graph as they are given to Vulkan.
pub const INITIAL: vk::ImageLayout = vk::ImageLayout::UNDEFINED;
pub const FINAL: vk::ImageLayout = vk::ImageLayout::TRANSFER_SRC_OPTIMAL;
/// The `finalLayout` of the render pass that draws into the swapchain image (`--direct`).
pub const PRESENT: vk::ImageLayout = vk::ImageLayout::PRESENT_SRC_KHR;
/// The attachment's access in the subpass (load op CLEAR, store op STORE).
pub const ACCESS: Access = Access::COLOR_ATTACHMENT_WRITE;

/// The RGBA8 pixel at (x, y) of frame `t` in a `w`×`h` scene. (The integration test has its
/// own copy, to check screenshots.)
pub fn expected_pixel(x: u32, y: u32, w: u32, h: u32, t: u32) -> [u8; 4] {
    let (x0, _, y0, y1) = bar(w, h, t);
    if x >= x0 && x < x0 + 64 && y >= y0 && y < y1 {
        return [255, 255, 255, 255];
    }
    let r = (t * 16) & 255;
    [r as u8, 64, 255 - r as u8, 255]
}

/// The bar of frame `t`: x from, width, y from, y to.
fn bar(w: u32, h: u32, t: u32) -> (u32, u32, u32, u32) {
    ((t * 24) % (w - 64).max(1), 64, h / 4, 3 * h / 4)
}

/// The render pass, a view of the scene image and the framebuffer; destroyed on drop (after
/// the GPU is done with them: the app waits on its fences first).
pub struct Scene {
    device: ash::Device,
    render_pass: vk::RenderPass,
    view: vk::ImageView,
    framebuffer: vk::Framebuffer,
    extent: vk::Extent2D,
}

impl Scene {
    /// The render pass drawing `image`, ending it in `final_layout` ([`FINAL`] or [`PRESENT`]).
    /// Without `outgoing`, it has only the incoming external dependency, as many swapchain
    /// render passes do: enough where the present comes next (the graph signals it at
    /// ALL_COMMANDS, which takes the move to `finalLayout` in), but no later barrier of the
    /// graph would chain from that move.
    pub fn new(
        device: &ash::Device,
        image: &StImage,
        final_layout: vk::ImageLayout,
        outgoing: bool,
    ) -> Result<Scene, vk::Result> {
        let d = image.desc();
        let attachment = [vk::AttachmentDescription2::default()
            .format(d.format)
            .samples(vk::SampleCountFlags::TYPE_1)
            .load_op(vk::AttachmentLoadOp::CLEAR)
            .store_op(vk::AttachmentStoreOp::STORE)
            .stencil_load_op(vk::AttachmentLoadOp::DONT_CARE)
            .stencil_store_op(vk::AttachmentStoreOp::DONT_CARE)
            .initial_layout(INITIAL)
            .final_layout(final_layout)];
        let color = [vk::AttachmentReference2::default()
            .attachment(0)
            .layout(ACCESS.layout)
            .aspect_mask(vk::ImageAspectFlags::COLOR)];
        let subpass = [vk::SubpassDescription2::default()
            .pipeline_bind_point(vk::PipelineBindPoint::GRAPHICS)
            .color_attachments(&color)];
        let deps = vk_baton::render_pass::external_dependencies(&[ACCESS]);
        let deps = if outgoing { &deps[..] } else { &deps[..1] };
        let info = vk::RenderPassCreateInfo2::default()
            .attachments(&attachment)
            .subpasses(&subpass)
            .dependencies(deps);
        // SAFETY: a complete create info on a live device.
        let render_pass = unsafe { device.create_render_pass2(&info, None) }?;
        let range = vk::ImageSubresourceRange::default()
            .aspect_mask(vk::ImageAspectFlags::COLOR)
            .level_count(1)
            .layer_count(1);
        let view_info = vk::ImageViewCreateInfo::default()
            .image(image.handle())
            .view_type(vk::ImageViewType::TYPE_2D)
            .format(d.format)
            .subresource_range(range);
        // SAFETY: a live image with COLOR_ATTACHMENT usage.
        let view = unsafe { device.create_image_view(&view_info, None) }?;
        let views = [view];
        let extent = vk::Extent2D {
            width: d.extent.width,
            height: d.extent.height,
        };
        let fb_info = vk::FramebufferCreateInfo::default()
            .render_pass(render_pass)
            .attachments(&views)
            .width(extent.width)
            .height(extent.height)
            .layers(1);
        // SAFETY: the view matches the render pass's attachment.
        let framebuffer = unsafe { device.create_framebuffer(&fb_info, None) }?;
        Ok(Scene {
            device: device.clone(),
            render_pass,
            view,
            framebuffer,
            extent,
        })
    }

    /// Records frame `t`: the render pass, a clear of the whole image and of the bar.
    ///
    /// # Safety
    ///
    /// `cmd` records outside a render pass on a graphics queue; the graph has put the scene
    /// image where the render pass takes it (any layout: `initialLayout` is UNDEFINED).
    pub unsafe fn record(&self, cmd: vk::CommandBuffer, t: u32) {
        let (w, h) = (self.extent.width, self.extent.height);
        let px = expected_pixel(w, h, w, h, t); // the background: no bar at (w, h)
        let clears = [vk::ClearValue {
            color: vk::ClearColorValue {
                float32: px.map(|c| c as f32 / 255.0),
            },
        }];
        let area = vk::Rect2D::default().extent(self.extent);
        let begin = vk::RenderPassBeginInfo::default()
            .render_pass(self.render_pass)
            .framebuffer(self.framebuffer)
            .render_area(area)
            .clear_values(&clears);
        let (x0, bw, y0, y1) = bar(w, h, t);
        let white = vk::ClearAttachment {
            aspect_mask: vk::ImageAspectFlags::COLOR,
            color_attachment: 0,
            clear_value: vk::ClearValue {
                color: vk::ClearColorValue { float32: [1.0; 4] },
            },
        };
        let rect = vk::ClearRect {
            rect: vk::Rect2D {
                offset: vk::Offset2D {
                    x: x0 as i32,
                    y: y0 as i32,
                },
                extent: vk::Extent2D {
                    width: bw,
                    height: y1 - y0,
                },
            },
            base_array_layer: 0,
            layer_count: 1,
        };
        let d = &self.device;
        // SAFETY: as the caller vouches; the objects are alive.
        unsafe {
            let contents = vk::SubpassBeginInfo::default().contents(vk::SubpassContents::INLINE);
            d.cmd_begin_render_pass2(cmd, &begin, &contents);
            d.cmd_clear_attachments(cmd, &[white], &[rect]);
            d.cmd_end_render_pass2(cmd, &vk::SubpassEndInfo::default());
        }
    }
}

impl Drop for Scene {
    fn drop(&mut self) {
        // SAFETY: the app waited for every frame that used them.
        unsafe {
            self.device.destroy_framebuffer(self.framebuffer, None);
            self.device.destroy_image_view(self.view, None);
            self.device.destroy_render_pass(self.render_pass, None);
        }
    }
}
