//! The deferred sample's picture against `tests/reference/deferred_320x180.png`: the
//! comparison, its tolerance, and the test that it notices each raster pass.

use super::{example, line, run};

/// Width, height and RGBA8 pixels of the PNG at `path`.
pub(crate) fn read_rgba(path: &std::path::Path) -> (u32, u32, Vec<u8>) {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut reader = png::Decoder::new(file).read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(
        (info.color_type, info.bit_depth),
        (png::ColorType::Rgba, png::BitDepth::Eight),
        "{}",
        path.display()
    );
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

/// The reference comparison's tolerance: a pixel differs when a channel is more than
/// `REFERENCE_CHANNEL` levels off, and at most `REFERENCE_PIXELS` of the 57 600 may.
///
/// The reference, `tests/reference/deferred_320x180.png`, is the deferred sample's frame 3 at
/// 320x180, rendered on lavapipe by the command of the test
/// `deferred_aliases_transients_within_the_targets_and_renders_the_same_without` and checked by
/// eye (lit boxes and balls with their shadows, the glass ball and slab, the UI panel). Lavapipe is
/// deterministic: the same build renders the same bytes, run after run (0 pixels differ). The
/// tolerance absorbs what another Mesa or LLVM version may round differently (a channel off by a
/// level or two, or a few edge pixels), not a pass: each raster pass drawing nothing changes far
/// more pixels (the G-buffer 41 689, the UI 4 928, the glass 3 476, the shadow map 1 935, the
/// forward depth 237), which `deferred_reference_notices_each_raster_pass` checks.
const REFERENCE_CHANNEL: u8 = 2;
const REFERENCE_PIXELS: usize = 60;

/// How far a picture is from the reference.
#[derive(Debug)]
struct Mismatch {
    /// Pixels off by more than `REFERENCE_CHANNEL` in some channel.
    pixels: usize,
    /// The largest difference of a channel.
    worst: u8,
    /// The first such pixel: x, y, its RGB and the reference's.
    first: Option<(u32, u32, [u8; 3], [u8; 3])>,
}

/// Compares a 320x180 RGBA8 frame of the deferred sample with the reference.
fn against_reference(rgba: &[u8]) -> Mismatch {
    let reference = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/reference/deferred_320x180.png");
    let (w, h, want) = read_rgba(&reference);
    assert_eq!(want.len(), rgba.len(), "the reference is {w}x{h}");
    let mut m = Mismatch {
        pixels: 0,
        worst: 0,
        first: None,
    };
    for (i, (a, b)) in rgba.chunks_exact(4).zip(want.chunks_exact(4)).enumerate() {
        let d = (0..4).map(|c| a[c].abs_diff(b[c])).max().unwrap_or(0);
        m.worst = m.worst.max(d);
        if d > REFERENCE_CHANNEL {
            m.pixels += 1;
            let at = (i as u32 % w, i as u32 / w);
            m.first
                .get_or_insert((at.0, at.1, [a[0], a[1], a[2]], [b[0], b[1], b[2]]));
        }
    }
    m
}

/// Asserts that the frame at `png_path` matches the reference within the tolerance; keeps it
/// in the temporary directory if not.
pub(crate) fn compare_with_reference(rgba: &[u8], png_path: &std::path::Path) {
    let m = against_reference(rgba);
    if m.pixels > REFERENCE_PIXELS {
        let kept = std::env::temp_dir().join("deferred_320x180.actual.png");
        let _ = std::fs::copy(png_path, &kept);
        panic!(
            "the frame differs from tests/reference/deferred_320x180.png in {} pixels by more \
             than {REFERENCE_CHANNEL} (at most {REFERENCE_PIXELS} may): {m:?}; it is kept in {}",
            m.pixels,
            kept.display()
        );
    }
    println!(
        "reference: {} pixels differ by more than {REFERENCE_CHANNEL}, the largest by {}",
        m.pixels, m.worst
    );
}

/// The reference comparison fails when any raster pass draws nothing (`--skip PASS`: the pass
/// still clears or loads its targets, so the plan and every check but the picture are the
/// same).
#[test]
fn deferred_reference_notices_each_raster_pass() {
    let dir = std::env::temp_dir().join(format!("vk-baton-deferred-skip-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for pass in [
        "shadow map",
        "gbuffer",
        "forward depth",
        "transparent",
        "ui",
    ] {
        let png_path = dir.join("deferred.png");
        let (_, out) = run(example("deferred")
            .args(["--frames", "4", "--width", "320", "--height", "180"])
            .args(["--skip", pass])
            .arg("--png")
            .arg(&png_path));
        if !line(&out, "device:").contains("llvmpipe") {
            println!("not lavapipe: the reference (made on lavapipe) does not apply");
            break;
        }
        let (_, _, rgba) = read_rgba(&png_path);
        let m = against_reference(&rgba);
        assert!(
            m.pixels > REFERENCE_PIXELS,
            "without `{pass}` only {} pixels differ from the reference",
            m.pixels
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
