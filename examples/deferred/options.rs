//! The deferred sample's command line.

use super::FRAMES_IN_FLIGHT;
use support::ValueExt;

const USAGE: &str = "usage: deferred [--width W] [--height H] [--frames N] [--shadow SIZE] \
                     [--exclusive] [--maintenance8] [--general-layouts] [--plan] [--report FILE.html] [--png PATH] [--skip PASS] [--held] [--replay] [--compare [--hand-split] [--hand-write-sets] [--labels]]";

/// Options from the command line.
pub struct Options {
    pub width: u32,
    pub height: u32,
    pub frames: u32,
    pub shadow: u32,
    pub exclusive: bool,
    pub plan: bool,
    /// Write an HTML report of the last frames there (`deferred/frame_report.rs`); the graph
    /// then times every pass.
    pub report: Option<std::path::PathBuf>,
    pub png: std::path::PathBuf,
    /// Raster passes (by name) that draw nothing: they still begin and end their rendering
    /// (clearing or loading their targets) and declare the same uses, so the plan is the same.
    /// What the reference comparison in tests/samples.rs must notice. (A compute pass left
    /// out would leave its output undefined, and the culling's draws are indirect arguments.)
    pub skip: Vec<String>,
    /// Run the hand-written frame beside the library's, time both and compare their pictures
    /// (`deferred/compare.rs`).
    pub compare: bool,
    /// With `--compare` on one VkQueue: the hand-written frame records its two-queue version
    /// on that queue (see `deferred/hand.rs`).
    pub hand_split: bool,
    /// With `--compare`: the hand-written frame writes its descriptor sets in every frame, as
    /// the library's passes do (see `deferred/hand.rs`).
    pub hand_write_sets: bool,
    /// The library's frames execute a held plan (`Planned::hold`, `HeldPlan::execute`) instead
    /// of building the frame every frame (see `deferred/held.rs`); with `--compare` too.
    pub held: bool,
    /// The graph keeps its recordings and submits them again when nothing changed
    /// (`Graph::set_replay`): every pass gives a replay key (see `deferred/dispatch.rs`).
    pub replay: bool,
    /// With `--compare`: the library side records its debug labels (pass and barrier labels,
    /// `Graph::set_labels`). Off by default there, as the hand-written frame records none.
    pub labels: bool,
    /// Enable `VK_KHR_maintenance8`: with `--exclusive`, the waits around ownership transfers
    /// are at the stages that use the images, not `ALL_COMMANDS`.
    pub maintenance8: bool,
    /// Every image use in `GENERAL` (`LayoutPolicy::General`, the policy for devices with
    /// `VK_KHR_unified_image_layouts`; valid, if perhaps slower, on any other).
    pub general_layouts: bool,
}

fn parse() -> Options {
    let mut o = Options {
        width: 640,
        height: 360,
        frames: 6,
        shadow: 1024,
        exclusive: false,
        plan: false,
        report: None,
        png: "deferred.png".into(),
        skip: Vec::new(),
        compare: false,
        hand_split: false,
        hand_write_sets: false,
        held: false,
        replay: false,
        labels: false,
        maintenance8: false,
        general_layouts: false,
    };
    support::parse_args(USAGE, |name, p| {
        match name {
            "width" => o.width = p.value()?.parse()?,
            "height" => o.height = p.value()?.parse()?,
            "frames" => o.frames = p.value()?.parse()?,
            "shadow" => o.shadow = p.value()?.parse()?,
            "exclusive" => o.exclusive = true,
            "plan" => o.plan = true,
            "report" => o.report = Some(p.value()?.into()),
            "png" => o.png = p.value()?.into(),
            "skip" => o.skip.push(p.value()?.string()?),
            "compare" => o.compare = true,
            "hand-split" => o.hand_split = true,
            "hand-write-sets" => o.hand_write_sets = true,
            "held" => o.held = true,
            "replay" => o.replay = true,
            "labels" => o.labels = true,
            "maintenance8" => o.maintenance8 = true,
            "general-layouts" => o.general_layouts = true,
            _ => return Ok(false),
        }
        Ok(true)
    });
    o
}

/// The options, checked: sizes and counts in range, and `--compare` without what the
/// hand-written frame does not do.
pub fn options() -> vk_baton::Result<Options> {
    let o = parse();
    // The frame loop needs a steady frame whichever frame makes the last heap set.
    let min_frames = if o.compare {
        FRAMES_IN_FLIGHT as u32 + 1
    } else {
        2 * FRAMES_IN_FLIGHT as u32
    };
    if o.width < 16 || o.height < 16 || o.frames < min_frames || o.shadow == 0 {
        return Err(vk_baton::Error::InvalidInput(format!(
            "--width and --height must be at least 16, --frames at least {min_frames}, \
             --shadow at least 1"
        )));
    }
    if o.compare && o.general_layouts {
        // The hand-written frame is written for the table's layouts.
        return Err(vk_baton::Error::InvalidInput(
            "--compare runs in the table's layouts: leave out --general-layouts".into(),
        ));
    }
    if o.compare && o.report.is_some() {
        // The comparison times its frames with timestamp passes of its own.
        return Err(vk_baton::Error::InvalidInput(
            "--report reports the frame loop: leave out --compare".into(),
        ));
    }
    if o.compare && o.exclusive {
        // The hand-written frame shares its images as the library's does by default.
        return Err(vk_baton::Error::InvalidInput(
            "--compare runs with CONCURRENT shared images: leave out --exclusive".into(),
        ));
    }
    Ok(o)
}
