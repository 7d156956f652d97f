//! Refused input end to end: queues and resources of another device, usage flags and
//! ranges, stale plans, empty resources. Each refusal is a clear error and submits nothing.

use super::*;

/// Declares a single use, records nothing.
struct Uses(
    Vec<(Arc<StImage>, Access, Option<ImageRange>)>,
    Vec<(Arc<StBuffer>, Access, Option<BufferRange>)>,
);

impl Pass for Uses {
    fn declare(&self, d: &mut Declare<'_>) {
        for (i, a, r) in &self.0 {
            match r {
                Some(r) => d.uses(i, *a).range(*r),
                None => d.uses(i, *a),
            };
        }
        for (b, a, r) in &self.1 {
            match r {
                Some(r) => d.uses(b, *a).range(*r),
                None => d.uses(b, *a),
            };
        }
    }
    fn record(&mut self, _r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        Ok(())
    }
}

#[test]
fn queue_and_resource_from_another_device_are_refused() {
    let ctx = ctx();
    let other = common::ctx();
    let img = ctx
        .image(
            ImageDesc::storage_2d(4, 4, vk::Format::R8G8B8A8_UNORM),
            "mine",
        )
        .unwrap();
    let foreign_img = other
        .image(
            ImageDesc::storage_2d(4, 4, vk::Format::R8G8B8A8_UNORM),
            "foreign",
        )
        .unwrap();
    let graph = ctx.graph().unwrap();

    let mut p = Uses(vec![(img.clone(), Access::TRANSFER_WRITE, None)], vec![]);
    let e = graph
        .record()
        .insert_pass("p", &mut p, other.graphics())
        .finish()
        .unwrap_err();
    assert!(matches!(e, Error::ForeignDevice { .. }), "{e}");

    let mut p = Uses(
        vec![(foreign_img.clone(), Access::TRANSFER_WRITE, None)],
        vec![],
    );
    let e = graph
        .record()
        .insert_pass("p", &mut p, ctx.graphics())
        .finish()
        .unwrap_err();
    assert!(matches!(e, Error::ForeignDevice { .. }), "{e}");
    assert!(e.to_string().contains("foreign"));
    drop(foreign_img);
    assert_clean(&ctx);
    assert_clean(&other);
}

#[test]
fn usage_flags_and_ranges_are_checked_end_to_end() {
    let ctx = ctx();
    let img = ctx
        .image(
            ImageDesc::new_2d(
                4,
                4,
                vk::Format::R8G8B8A8_UNORM,
                vk::ImageUsageFlags::TRANSFER_DST | vk::ImageUsageFlags::SAMPLED,
            ),
            "no-storage",
        )
        .unwrap();
    let buf = ctx
        .buffer(
            BufferDesc::new(64, vk::BufferUsageFlags::TRANSFER_DST),
            "buf",
        )
        .unwrap();
    let graph = ctx.graph().unwrap();

    let mut p = Uses(
        vec![(img.clone(), Access::COMPUTE_SHADER_WRITE, None)],
        vec![],
    );
    let e = graph
        .record()
        .insert_pass("storage write", &mut p, ctx.async_compute())
        .finish()
        .unwrap_err();
    assert!(matches!(e, Error::UsageNotAllowed { .. }), "{e}");

    let mut p = Uses(
        vec![],
        vec![(
            buf.clone(),
            Access::TRANSFER_WRITE,
            Some(BufferRange {
                offset: 60,
                size: 8,
            }),
        )],
    );
    let e = graph
        .record()
        .insert_pass("past the end", &mut p, ctx.transfer())
        .finish()
        .unwrap_err();
    assert!(matches!(e, Error::RangeOutOfBounds { .. }), "{e}");

    let mut p = Uses(
        vec![(
            img.clone(),
            Access::TRANSFER_WRITE,
            Some(ImageRange::mip(1, 1)),
        )],
        vec![],
    );
    let e = graph
        .record()
        .insert_pass("mip 1 of 1", &mut p, ctx.graphics())
        .finish()
        .unwrap_err();
    assert!(matches!(e, Error::RangeOutOfBounds { .. }), "{e}");

    let mut p = Uses(
        vec![
            (img.clone(), Access::TRANSFER_WRITE, None),
            (img.clone(), Access::FRAGMENT_SHADER_SAMPLED_READ, None),
        ],
        vec![],
    );
    let e = graph
        .record()
        .insert_pass("twice", &mut p, ctx.graphics())
        .finish()
        .unwrap_err();
    assert!(matches!(e, Error::ConflictingUses { .. }), "{e}");

    // Nothing changed: the resources are still fresh.
    assert_eq!(img.state().version, 0);
    assert_eq!(buf.state().version, 0);
    assert_clean(&ctx);
}

#[test]
fn stale_plan_is_refused_before_submitting() {
    let ctx = ctx();
    let buf = ctx
        .buffer(
            BufferDesc::new(
                256,
                vk::BufferUsageFlags::TRANSFER_DST | vk::BufferUsageFlags::TRANSFER_SRC,
            ),
            "buf",
        )
        .unwrap();
    let src = ctx
        .buffer(
            BufferDesc::upload(256, vk::BufferUsageFlags::TRANSFER_SRC),
            "src",
        )
        .unwrap();
    let graph = ctx.graph().unwrap();
    let mut a = CopyBuffer {
        src: src.clone(),
        dst: buf.clone(),
    };
    let mut b = CopyBuffer {
        src: src.clone(),
        dst: buf.clone(),
    };
    let planned_a = graph
        .record()
        .insert_pass("a", &mut a, ctx.graphics())
        .finish()
        .unwrap();
    let planned_b = graph
        .record()
        .insert_pass("b", &mut b, ctx.graphics())
        .finish()
        .unwrap();
    let fence = planned_b.execute().unwrap();
    let e = planned_a.execute().unwrap_err();
    assert!(matches!(e, Error::StalePlan { .. }), "{e}");
    fence.wait().unwrap();
    assert_clean(&ctx);
}

#[test]
fn empty_resources_are_refused() {
    let ctx = ctx();
    let e = ctx
        .buffer(
            BufferDesc::new(0, vk::BufferUsageFlags::TRANSFER_DST),
            "empty",
        )
        .unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    let desc = ImageDesc::new_2d(
        0,
        16,
        vk::Format::R8G8B8A8_UNORM,
        vk::ImageUsageFlags::TRANSFER_DST,
    );
    let e = ctx.image(desc, "empty").unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    assert_clean(&ctx);
}
