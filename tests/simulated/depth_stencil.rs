//! Depth and stencil of one image used apart across queues: async compute samples the depth
//! a graphics prepass wrote while graphics goes on with the stencil (decals, then
//! stencil-masked lighting). Only the depth plane changes hands.

use super::*;

/// ```text
/// graphics:      [prepass: both] --DEPTH release-->  [decals: STENCIL written] [light: STENCIL tested]
/// async compute:                     acquire DEPTH --> [ao: samples DEPTH]
/// ```
///
/// Across two families (EXCLUSIVE), each frame has one release of the depth plane on
/// graphics and its acquire on compute, naming DEPTH alone; the stencil plane never moves. The
/// next frame's prepass discards both planes: no transfer back, a wait for the compute read
/// (write after read). Steady state, where graphics and compute are two queues: three batches
/// (graphics up to the release, compute, graphics after it), two waits (compute on this
/// frame's prepass, the prepass on the last frame's compute read). On one queue: one batch.
pub(crate) fn depth_to_compute_stencil_stays(topo: Topo) -> usize {
    use vk::ImageAspectFlags as A;
    let mut s = S::new(topo);
    let usage = vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT | vk::ImageUsageFlags::SAMPLED;
    let ds = s
        .sim
        .add_resource(ResourceDecl::image("ds", 1, 1, usage).aspect(A::DEPTH | A::STENCIL));
    for f in 0..FRAMES {
        let r = s.run(vec![
            pass("prepass", s.g, [ud(ds, Access::DEPTH_ATTACHMENT_WRITE)]),
            pass(
                "ao",
                s.c,
                [u(ds, Access::COMPUTE_SHADER_SAMPLED_READ).aspect(A::DEPTH)],
            ),
            pass(
                "decals",
                s.g,
                [u(ds, Access::DEPTH_ATTACHMENT_WRITE).aspect(A::STENCIL)],
            ),
            pass(
                "light",
                s.g,
                [u(ds, Access::DEPTH_ATTACHMENT_READ).aspect(A::STENCIL)],
            ),
        ]);
        let cross = s.cross(s.g, s.c);
        let pair = if cross { (1, 1) } else { (0, 0) };
        assert_eq!(
            releases_acquires(&s, &r, s.g, s.c),
            pair,
            "{topo:?}\n{}",
            r.plan
        );
        // Every ownership transfer names the depth plane alone.
        let transfers = (r.plan.image_barriers()).filter(|i| i.scopes.families.is_some());
        assert!(
            transfers.clone().all(|i| i.aspect == A::DEPTH),
            "{}",
            r.plan
        );
        assert_eq!(transfers.count(), 2 * pair.0);
        let want = match (s.g == s.c, f) {
            (true, _) => (1, 0, 0),
            (false, 0) => (3, 1, 2 * pair.0),
            (false, _) => (3, 2, 2 * pair.0),
        };
        check(&s, "frame", &r, want);
    }
    FRAMES
}
