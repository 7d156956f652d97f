//! `Plan::to_json()` (feature `serde`): the same content as the text form, as data. CI runs it
//! with `cargo test -p vk-baton --features serde --test plan_json`.

use serde_json::{json, Value};
use vk_baton::ash::vk::{self, Handle};
use vk_baton::plan::*;
use vk_baton::Access;

/// One queue: `fill` writes a buffer, a barrier, `draw` reads it as vertices.
fn fill_then_draw() -> Plan {
    let input = PlanInput {
        queues: vec![QueueDecl::new(
            "gfx",
            0,
            vk::QueueFlags::GRAPHICS | vk::QueueFlags::TRANSFER,
        )],
        resources: vec![ResourceDecl::buffer(
            "buf",
            256,
            vk::BufferUsageFlags::TRANSFER_DST | vk::BufferUsageFlags::VERTEX_BUFFER,
        )],
        passes: vec![
            PassDecl::new("fill", 0).with_use(UseDecl::new(0, Access::TRANSFER_WRITE)),
            PassDecl::new("draw", 0).with_use(UseDecl::new(0, Access::VERTEX_BUFFER)),
        ],
    };
    plan(&input).unwrap()
}

#[test]
fn a_one_queue_plan_whole_as_text() {
    let expected = r#"{
  "queues": [
    {
      "name": "gfx",
      "family": 0,
      "caps": "GRAPHICS | TRANSFER",
      "transfers_use_all_stages": false,
      "maintenance9": null,
      "batches": [
        {
          "waits": [],
          "commands": [
            {
              "kind": "pass",
              "pass": 0,
              "name": "fill"
            },
            {
              "kind": "barrier",
              "images": [],
              "buffers": [
                {
                  "resource": 0,
                  "name": "buf",
                  "offset": 0,
                  "size": 256,
                  "src_stages": "ALL_TRANSFER",
                  "src_access": "TRANSFER_WRITE",
                  "dst_stages": "VERTEX_ATTRIBUTE_INPUT",
                  "dst_access": "VERTEX_ATTRIBUTE_READ",
                  "families": null,
                  "cause": {
                    "pass": 1,
                    "pass_name": "draw",
                    "after": {
                      "kind": "pass",
                      "pass": 0,
                      "name": "fill"
                    }
                  }
                }
              ]
            },
            {
              "kind": "pass",
              "pass": 1,
              "name": "draw"
            }
          ],
          "binary_signals": [],
          "timeline_signal": "ALL_COMMANDS"
        }
      ]
    }
  ]
}"#;
    assert_eq!(fill_then_draw().to_json(), expected);
}

/// The plan module's example: compute (family 1) writes an image, graphics (family 0)
/// samples it; the text form says the same.
#[test]
fn an_ownership_transfer_whole() {
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
    let plan = plan(&input).unwrap();
    let image = |old: &str, new: &str, src: [&str; 2], dst: [&str; 2], families: Value| {
        // The first barrier prepares `simulate` with nothing before it; the release and the
        // acquire prepare `shade`, after `simulate`.
        let cause = match old {
            "UNDEFINED" => {
                json!({ "pass": 0, "pass_name": "simulate", "after": { "kind": "nothing" } })
            }
            _ => json!({ "pass": 1, "pass_name": "shade",
                         "after": { "kind": "pass", "pass": 0, "name": "simulate" } }),
        };
        json!({
            "resource": 0, "name": "img",
            "base_mip": 0, "mip_count": 1, "base_layer": 0, "layer_count": 1,
            "old_layout": old, "new_layout": new,
            "src_stages": src[0], "src_access": src[1],
            "dst_stages": dst[0], "dst_access": dst[1],
            "families": families,
            "cause": cause,
        })
    };
    let barrier = |image: Value| json!({ "kind": "barrier", "images": [image], "buffers": [] });
    let expected = json!({ "queues": [
        {
            "name": "compute", "family": 1, "caps": "COMPUTE",
            "transfers_use_all_stages": false, "maintenance9": null,
            "batches": [{
                "waits": [],
                "commands": [
                    barrier(image("UNDEFINED", "GENERAL", ["NONE", "NONE"],
                        ["COMPUTE_SHADER", "SHADER_STORAGE_WRITE"], Value::Null)),
                    { "kind": "pass", "pass": 0, "name": "simulate" },
                    barrier(image("GENERAL", "SHADER_READ_ONLY_OPTIMAL",
                        ["COMPUTE_SHADER", "SHADER_STORAGE_WRITE"], ["COMPUTE_SHADER", "NONE"],
                        json!([1, 0]))),
                ],
                "binary_signals": [],
                "timeline_signal": "ALL_COMMANDS",
            }],
        },
        {
            "name": "graphics", "family": 0, "caps": "GRAPHICS | COMPUTE",
            "transfers_use_all_stages": false, "maintenance9": null,
            "batches": [{
                "waits": [{
                    "kind": "batch", "queue": 0, "queue_name": "compute", "batch": 0,
                    "stages": "ALL_COMMANDS",
                }],
                "commands": [
                    barrier(image("GENERAL", "SHADER_READ_ONLY_OPTIMAL",
                        ["FRAGMENT_SHADER", "NONE"], ["FRAGMENT_SHADER", "SHADER_SAMPLED_READ"],
                        json!([1, 0]))),
                    { "kind": "pass", "pass": 1, "name": "shade" },
                ],
                "binary_signals": [],
                "timeline_signal": "ALL_COMMANDS",
            }],
        },
    ]});
    let got: Value = serde_json::from_str(&plan.to_json()).unwrap();
    assert_eq!(got, expected, "{plan}");
}

/// Three families with a swapchain wait and present, plus a wait on an earlier graph: the
/// JSON holds as many batches, waits of each kind, barrier commands, ownership transfers and
/// passes as the plan.
#[test]
fn counts_round_trip() {
    let gct = vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE | vk::QueueFlags::TRANSFER;
    let (acquired, rendered) = (vk::Semaphore::from_raw(0xa1), vk::Semaphore::from_raw(0xb2));
    let input = PlanInput {
        queues: vec![
            QueueDecl::new("graphics", 0, gct),
            QueueDecl::new(
                "compute",
                1,
                vk::QueueFlags::COMPUTE | vk::QueueFlags::TRANSFER,
            ),
            QueueDecl::new("transfer", 2, vk::QueueFlags::TRANSFER),
        ],
        resources: vec![
            ResourceDecl::buffer(
                "mesh",
                4096,
                vk::BufferUsageFlags::TRANSFER_DST | vk::BufferUsageFlags::VERTEX_BUFFER,
            ),
            ResourceDecl::image(
                "particles",
                1,
                1,
                vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED,
            ),
            ResourceDecl::image("swapchain", 1, 1, vk::ImageUsageFlags::COLOR_ATTACHMENT),
        ],
        passes: vec![
            PassDecl::new("upload mesh", 2)
                .with_use(UseDecl::new(0, Access::TRANSFER_WRITE).discard()),
            PassDecl::new("simulate particles", 1)
                .with_use(UseDecl::new(1, Access::COMPUTE_SHADER_WRITE).discard()),
            PassDecl::new("draw", 0)
                .with_wait(BinaryWaitDecl {
                    semaphore: acquired,
                    guards: vec![2],
                    stages: None,
                })
                .with_use(UseDecl::new(0, Access::VERTEX_BUFFER))
                .with_use(UseDecl::new(1, Access::FRAGMENT_SHADER_SAMPLED_READ))
                .with_use(UseDecl::new(2, Access::COLOR_ATTACHMENT_WRITE).discard()),
            PassDecl::new("present", 0)
                .with_use(UseDecl::new(2, Access::PRESENT))
                .with_signal(BinarySignalDecl {
                    semaphore: rendered,
                    stages: None,
                }),
        ],
    };
    let mut plan = plan(&input).unwrap();
    plan.queues[1].batches[0].waits.push(Wait {
        target: WaitTarget::Value {
            queue: 0,
            value: 41,
        },
        stages: vk::PipelineStageFlags2::COMPUTE_SHADER,
    });
    let json: Value = serde_json::from_str(&plan.to_json()).unwrap();

    let queues = json["queues"].as_array().unwrap();
    assert_eq!(queues.len(), 3);
    let batches: Vec<&Value> = queues
        .iter()
        .flat_map(|q| q["batches"].as_array().unwrap())
        .collect();
    assert_eq!(batches.len(), plan.batch_count());
    let all = |key: &str| -> Vec<&Value> {
        batches
            .iter()
            .flat_map(|b| b[key].as_array().unwrap())
            .collect()
    };
    let waits = all("waits");
    assert_eq!(waits.len(), plan.semaphore_waits());
    let kinds = |k: &str| waits.iter().filter(|w| w["kind"] == k).count();
    assert_eq!((kinds("batch"), kinds("value"), kinds("binary")), (2, 1, 1));
    let binary = waits.iter().find(|w| w["kind"] == "binary").unwrap();
    assert_eq!(
        **binary,
        json!({ "kind": "binary", "semaphore": 0xa1, "stages": "COLOR_ATTACHMENT_OUTPUT" })
    );
    let value = waits.iter().find(|w| w["kind"] == "value").unwrap();
    assert_eq!(
        **value,
        json!({ "kind": "value", "queue": 0, "queue_name": "graphics", "value": 41, "stages": "COMPUTE_SHADER" })
    );

    let commands = all("commands");
    let barriers: Vec<&&Value> = commands.iter().filter(|c| c["kind"] == "barrier").collect();
    assert_eq!(barriers.len(), plan.barrier_commands());
    let passes: Vec<&str> = commands
        .iter()
        .filter(|c| c["kind"] == "pass")
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        passes,
        ["draw", "present", "simulate particles", "upload mesh"]
    );
    // Two releases and their two acquires.
    let transfers = barriers
        .iter()
        .flat_map(|b| {
            b["images"]
                .as_array()
                .unwrap()
                .iter()
                .chain(b["buffers"].as_array().unwrap())
        })
        .filter(|b| !b["families"].is_null())
        .count();
    assert_eq!(transfers, 4);
    let signals = all("binary_signals");
    assert_eq!(
        signals,
        [&json!({ "semaphore": 0xb2, "stages": "COLOR_ATTACHMENT_OUTPUT" })]
    );
}
