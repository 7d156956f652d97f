//! The frame data the viewer reads, whole, for small plans: the axis each kind of timing
//! gives, the batches with their barrier entries and causes, and the findings.

use super::frame::{write, FrameInput};
use super::json::Strings;
use crate::plan::*;
use crate::violation::{Actor, HazardKind, Violation};
use crate::Access;
use ash::vk;

/// Compute (family 1) writes an image, graphics (family 0) samples it: a release, a wait and
/// an acquire.
///
/// ```text
/// compute:  [simulate] release 1->0 --.
/// graphics:          wait <-----------'  acquire 1->0 [shade]
/// ```
fn handed_over() -> Plan {
    let input = PlanInput {
        queues: vec![
            QueueDecl::new("compute", 1, vk::QueueFlags::COMPUTE),
            QueueDecl::new(
                "graphics",
                0,
                vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE,
            ),
        ],
        resources: vec![ResourceDecl::image(
            "img",
            1,
            1,
            vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED,
        )],
        passes: vec![
            PassDecl::new("simulate", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_WRITE)),
            PassDecl::new("shade", 1)
                .with_use(UseDecl::new(0, Access::FRAGMENT_SHADER_SAMPLED_READ)),
        ],
    };
    plan(&input).unwrap()
}

/// The frame's JSON and the string table it names.
fn frame(plan: &Plan, measured: &[Option<(u64, u64)>], findings: &[Violation]) -> (String, String) {
    let mut strings = Strings::default();
    let mut out = String::new();
    let input = FrameInput {
        label: "f",
        plan,
        measured,
        findings,
    };
    write(&mut out, &mut strings, &input);
    let mut table = String::new();
    strings.write(&mut table);
    (out, table)
}

/// Both passes timed: the axis is GPU time from the first start (1 µs in), the measured span
/// is the first start to the last end, and the prediction (both passes one after the other)
/// marks both critical. The release (kind 1) and the acquire (kind 2) name `shade`, after
/// `simulate` (string 13); the first transition names `simulate`, after nothing.
#[test]
fn a_timed_frame_is_on_measured_gpu_time() {
    let (f, strings) = frame(
        &handed_over(),
        &[Some((1000, 4000)), Some((5000, 6000))],
        &[],
    );
    assert_eq!(
        f,
        concat!(
            r#"{"label":"f","axis":"measured","queues":[{"name":"compute","family":1,"caps":0},"#,
            r#"{"name":"graphics","family":0,"caps":1}],"#,
            r#""resources":[{"name":"img","kind":"image","transient":false}],"#,
            r#""passes":[{"name":"simulate","queue":0,"x":[0,3000],"ns":3000,"critical":true,"uses":[[0,3,4,2]]},"#,
            r#"{"name":"shade","queue":1,"x":[4000,5000],"ns":1000,"critical":true,"uses":[[0,3,6,5]]}],"#,
            r#""batches":[{"queue":0,"index":0,"x":[0,3000],"waits":[],"signal":7,"binary_signals":[],"#,
            r#""items":[{"x":0,"entries":[[0,3,8,2,9,9,10,11,null,0,0,12,-1]]},0,"#,
            r#"{"x":3000,"entries":[[0,3,2,5,10,11,10,9,[1,0],1,1,13,0]]}]},"#,
            r#"{"queue":1,"index":0,"x":[4000,5000],"waits":[[0,0,0,7]],"signal":7,"binary_signals":[],"#,
            r#""items":[{"x":4000,"entries":[[0,3,2,5,14,9,14,15,[1,0],2,1,13,0]]},1]}],"#,
            r#""span":{"predicted_ns":4000,"measured_ns":5000,"serial_ns":4000,"critical":[0,1]},"#,
            r#""moves":[],"memory":null,"findings":[]}"#
        )
    );
    assert_eq!(
        strings,
        concat!(
            r#"["COMPUTE","GRAPHICS | COMPUTE","GENERAL","mips 0+1 layers 0+1","#,
            r#""COMPUTE_SHADER/SHADER_STORAGE_WRITE","SHADER_READ_ONLY_OPTIMAL","#,
            r#""FRAGMENT_SHADER/SHADER_SAMPLED_READ","ALL_COMMANDS","UNDEFINED","NONE","#,
            r#""COMPUTE_SHADER","SHADER_STORAGE_WRITE","for `simulate`, with nothing before it","#,
            r#""for `shade`, after `simulate`","FRAGMENT_SHADER","SHADER_SAMPLED_READ"]"#
        )
    );
}

/// Untimed: each pass one unit of plan order, `shade` after the wait for `simulate`; no span,
/// no critical path.
#[test]
fn an_untimed_frame_is_in_plan_order() {
    let (f, _) = frame(&handed_over(), &[], &[]);
    let passes = concat!(
        r#""passes":[{"name":"simulate","queue":0,"x":[0,1],"ns":null,"critical":false,"uses":[[0,3,4,2]]},"#,
        r#"{"name":"shade","queue":1,"x":[1,2],"ns":null,"critical":false,"uses":[[0,3,6,5]]}],"#
    );
    assert!(f.contains(r#""axis":"order""#) && f.contains(passes), "{f}");
    assert!(
        f.contains(r#""x":1,"entries":[[0,3,2,5,10,11,10,9,[1,0],1,1,13,0]]"#),
        "{f}"
    );
    let span = r#""span":{"predicted_ns":null,"measured_ns":null,"serial_ns":null,"critical":[]}"#;
    assert!(f.contains(span), "{f}");
}

/// Only `simulate` timed (its queue has timestamps, `shade`'s not): the axis is the best case
/// from the measured durations, where `shade` takes no time; the measured span is
/// `simulate`'s.
#[test]
fn a_frame_timed_in_part_is_on_the_predicted_axis() {
    let (f, _) = frame(&handed_over(), &[Some((1000, 4000)), None], &[]);
    assert!(f.contains(r#""axis":"predicted""#), "{f}");
    assert!(f.contains(r#""x":[0,3000],"ns":3000"#), "{f}");
    assert!(f.contains(r#""x":[3000,3000],"ns":null"#), "{f}");
    let span = r#""span":{"predicted_ns":3000,"measured_ns":3000,"serial_ns":3000"#;
    assert!(f.contains(span), "{f}");
}

/// A finding names the passes on both sides, by index, and its text is the verifier's.
#[test]
fn a_finding_names_its_passes() {
    let pass = |pass: usize, name: &str| Actor::Pass {
        execution: 0,
        pass,
        name: name.into(),
    };
    let v = Violation {
        kind: HazardKind::Raw,
        first: Some(pass(0, "simulate")),
        second: Some(pass(1, "shade")),
        resource: Some("img".into()),
        range: Some("mips 0..1 layers 0..1".into()),
        missing: "memory dependency".into(),
    };
    let (f, _) = frame(&handed_over(), &[], &[v]);
    let finding = concat!(
        r#""findings":[{"kind":"RAW","text":"RAW on `img` mips 0..1 layers 0..1: "#,
        r#"pass `simulate` -\u003e pass `shade`: missing memory dependency","#,
        r#""pass":1,"first_pass":0,"resource":"img"}]}"#
    );
    assert!(f.ends_with(finding), "{f}");
}
