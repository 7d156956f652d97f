//! Labels: their text, and the labels kept with a plan.

use super::*;
use crate::plan::{BufferBarrier, ImageBarrier, Scopes};
use crate::range::{BufferRange, ImageRange};
use ash::vk;

fn text(
    b: &BarrierCmd,
    family: u32,
    before: Option<&str>,
    after: Option<&str>,
) -> (String, [f32; 4]) {
    let mut t = LabelText::new();
    let c = barrier_label(&mut t, b, family, before, after);
    (t.as_str().to_owned(), c)
}

fn scopes(families: Option<(u32, u32)>) -> Scopes {
    Scopes {
        src_stages: vk::PipelineStageFlags2::COPY,
        src_access: vk::AccessFlags2::TRANSFER_WRITE,
        dst_stages: vk::PipelineStageFlags2::COPY,
        dst_access: vk::AccessFlags2::TRANSFER_READ,
        families,
    }
}

fn buffer(families: Option<(u32, u32)>) -> BufferBarrier {
    BufferBarrier {
        resource: 0,
        range: BufferRange { offset: 0, size: 4 },
        scopes: scopes(families),
        cause: None,
    }
}

#[test]
fn barrier_labels_name_the_pass_and_the_ownership_transfers() {
    let grey = color(barrier_rgb(false));
    let purple = color(barrier_rgb(true));
    assert_ne!(grey, purple);
    let plain = BarrierCmd {
        images: vec![],
        buffers: vec![buffer(None)],
    };
    assert_eq!(
        text(&plain, 0, Some("shade"), Some("sim")),
        ("barriers before `shade`".into(), grey)
    );
    assert_eq!(
        text(&plain, 0, None, Some("sim")),
        ("barriers after `sim`".into(), grey)
    );
    assert_eq!(text(&plain, 0, None, None), ("barriers".into(), grey));

    let image = ImageBarrier {
        resource: 1,
        range: ImageRange::mip(0, 1),
        aspect: vk::ImageAspectFlags::COLOR,
        scopes: scopes(Some((2, 0))),
        old_layout: vk::ImageLayout::GENERAL,
        new_layout: vk::ImageLayout::GENERAL,
        cause: None,
    };
    let both = BarrierCmd {
        images: vec![image],
        buffers: vec![buffer(None), buffer(Some((0, 1))), buffer(Some((0, 2)))],
    };
    assert_eq!(
        text(&both, 0, None, Some("sim")),
        (
            "barriers after `sim`, release to family 1, acquire from family 2".into(),
            purple
        )
    );
    let external = BarrierCmd {
        images: vec![],
        buffers: vec![buffer(Some((3, vk::QUEUE_FAMILY_EXTERNAL)))],
    };
    assert_eq!(
        text(&external, 3, None, Some("present")).0,
        "barriers after `present`, release to external"
    );
}

#[test]
fn passes_are_coloured_like_their_queue_in_the_diagram() {
    assert_eq!(pass_color(0), color(queue_rgb(0)));
    assert_ne!(pass_color(0), pass_color(1));
    assert_eq!(pass_color(0)[3], 1.0);
    let [r, g, b, _] = pass_color(0);
    assert_eq!(
        [r, g, b].map(|c| (c * 255.0).round() as u8),
        [0x2f, 0x6d, 0xb5],
        "the diagram's blue"
    );
}

#[test]
fn label_text_is_cut_at_a_character_boundary() {
    let mut t = LabelText::new();
    let _ = write!(t, "{}", "é".repeat(100));
    assert_eq!(
        t.as_str(),
        "é".repeat(63),
        "126 bytes: a 64th would not fit"
    );
    assert_eq!(t.as_c_str().to_bytes(), "é".repeat(63).as_bytes());
    let mut short = LabelText::new();
    let _ = write!(short, "gfx batch {}", 3);
    assert_eq!(short.as_str(), "gfx batch 3");
    assert_eq!(short.as_c_str(), c"gfx batch 3");
    // A NUL cannot be in a C string.
    let mut nul = LabelText::new();
    nul.push("a\0b");
    assert_eq!(nul.as_c_str(), c"a?b");
    // Full: 126 bytes of text, then the NUL.
    let mut full = LabelText::new();
    full.push(&"x".repeat(200));
    assert_eq!(full.as_c_str().to_bytes().len(), 126);
}

#[test]
fn neighbours_are_the_passes_right_before_and_after() {
    let batch = Batch {
        commands: vec![
            Command::Pass(4),
            Command::Barrier(BarrierCmd::default()),
            Command::Pass(7),
            Command::Barrier(BarrierCmd::default()),
        ],
        ..Batch::default()
    };
    let name = |p: usize| if p == 4 { "a" } else { "b" };
    assert_eq!(neighbours(&batch, 1, name), (Some("b"), Some("a")));
    assert_eq!(neighbours(&batch, 3, name), (None, Some("b")));
    assert_eq!(neighbours(&batch, 0, name), (None, None));
}

/// The labels kept with a plan are, command by command in recording order, the ones
/// recording would build, on three queue families with ownership transfers both ways; and
/// a pass named otherwise in a later frame gets its labels built again.
#[test]
fn kept_labels_are_the_labels_recording_builds() {
    use crate::plan::{plan, PassDecl, PlanInput, QueueDecl, ResourceDecl, UseDecl};
    use crate::Access;
    let q = vk::QueueFlags::TRANSFER;
    let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    let pass = |name: &str, queue, uses: &[(usize, Access)]| {
        (uses.iter()).fold(PassDecl::new(name, queue), |p, &(r, a)| {
            p.with_use(UseDecl::new(r, a))
        })
    };
    let input = PlanInput {
        queues: (0..3)
            .map(|f| QueueDecl::new(&format!("q{f}"), f, q))
            .collect(),
        resources: (0..2)
            .map(|r| ResourceDecl::buffer(&format!("b{r}"), 64, usage))
            .collect(),
        passes: vec![
            pass("fill", 0, &[(0, Access::TRANSFER_WRITE)]),
            pass(
                "copy",
                1,
                &[(0, Access::COPY_READ), (1, Access::COPY_WRITE)],
            ),
            pass(
                "again",
                1,
                &[(1, Access::COPY_READ), (0, Access::COPY_WRITE)],
            ),
            pass(
                "back",
                0,
                &[(0, Access::COPY_READ), (1, Access::COPY_WRITE)],
            ),
            pass("last", 2, &[(1, Access::COPY_READ)]),
        ],
    };
    let plan = plan(&input).unwrap();
    let names: Vec<String> = input.passes.iter().map(|p| p.name.clone()).collect();
    let family = |qi: usize| input.queues[qi].family;
    let mut labels = PlanLabels::default();
    keep(&mut labels, &plan, family, |p| names[p].as_str());
    let mut k = 0;
    let mut transfers = 0;
    for (qi, qp) in plan.queues.iter().enumerate() {
        for batch in &qp.batches {
            for (c, command) in batch.commands.iter().enumerate() {
                match command {
                    Command::Barrier(b) => {
                        let (before, after) = neighbours(batch, c, |p| names[p].as_str());
                        let mut t = LabelText::new();
                        let color = barrier_label(&mut t, b, family(qi), before, after);
                        transfers += t.as_str().contains(" from family ") as usize;
                        let kept = labels.barrier(k, |p| names[p].as_str());
                        assert_eq!(kept, Some((t.as_c_str(), color)), "barrier command {k}");
                        k += 1;
                    }
                    Command::Pass(p) => {
                        let kept = labels.pass(*p, &names[*p]);
                        assert_eq!(kept.map(|c| c.to_str().unwrap()), Some(names[*p].as_str()));
                    }
                }
            }
        }
    }
    assert!(
        k >= 4 && transfers >= 2,
        "{k} barrier commands, {transfers} acquires:\n{plan}"
    );
    assert_eq!(
        labels.barrier(k, |p| names[p].as_str()),
        None,
        "past the last"
    );
    // "copy" is named otherwise now: each barrier label that names it is built again, and
    // the others stay.
    let renamed = |p: usize| if p == 1 { "renamed" } else { names[p].as_str() };
    let kept_now = (0..k)
        .filter(|&k| labels.barrier(k, renamed).is_some())
        .count();
    let naming_copy = (0..k)
        .filter(|&k| {
            labels
                .barrier(k, |p| names[p].as_str())
                .unwrap()
                .0
                .to_str()
                .unwrap()
                .contains("`copy`")
        })
        .count();
    assert!(naming_copy >= 1);
    assert_eq!(kept_now, k - naming_copy);
}

#[test]
fn kept_labels_are_given_while_their_passes_keep_their_names() {
    let mut labels = PlanLabels::default();
    assert_eq!(labels.pass(0, "a"), None, "nothing built yet");
    let grey = [0.5, 0.5, 0.5, 1.0];
    labels.rebuild(|l| {
        l.push_pass("a");
        l.push_pass("b\0c");
        l.push_barrier(c"barriers before `a`", grey, Some(0));
        l.push_barrier(c"barriers", grey, None);
    });
    let names = ["a", "b\0c"];
    assert_eq!(labels.pass(0, "a"), Some(c"a"));
    // A name with a NUL is kept as `b?c` and never matches: built every time.
    assert_eq!(labels.pass(1, "b\0c"), None);
    assert_eq!(labels.pass(1, "b?c"), Some(c"b?c"));
    assert_eq!(labels.pass(2, "a"), None, "past the last pass");
    let barrier = |k, names: &[&'static str; 2]| labels.barrier(k, |p| names[p]);
    assert_eq!(barrier(0, &names), Some((c"barriers before `a`", grey)));
    assert_eq!(barrier(1, &names), Some((c"barriers", grey)));
    assert_eq!(barrier(2, &names), None, "past the last");
    // Pass 0 is named otherwise in this frame: its labels must be built again.
    let renamed = ["renamed", "b"];
    assert_eq!(labels.pass(0, "renamed"), None);
    assert_eq!(barrier(0, &renamed), None);
    assert_eq!(barrier(1, &renamed), Some((c"barriers", grey)));
    labels.forget();
    assert_eq!(
        labels.barrier(1, |p| names[p]),
        None,
        "forgotten with a new plan"
    );
    assert_eq!(labels.pass(0, "a"), None);
    // Built again, for a plan with no barrier command and one pass.
    labels.rebuild(|l| l.push_pass("only"));
    assert_eq!(labels.pass(0, "only"), Some(c"only"));
    assert_eq!(
        (labels.pass(1, "b?c"), labels.barrier(0, |_| "only")),
        (None, None)
    );
    // And for nothing at all.
    labels.rebuild(|_| {});
    assert!(labels.built());
    assert_eq!(labels.pass(0, "only"), None);
}
