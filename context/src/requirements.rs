//! What a test needs beyond a Vulkan 1.3 device, and what it does on a machine that lacks it.
//!
//! Most GPU tests need only a Vulkan 1.3 device and the validation layer, and fail without
//! them. A few need something optional: a device extension or feature (ray tracing, mesh
//! shaders, present fences), a validation layer new enough to check synchronization at submit
//! time (1.4.309 or newer: Debian 12's 1.3.239 checks only within one command buffer), or a
//! program (`xvfb-run`, for the window sample). Such a test names its [`Need`]s and asks the
//! [`Machine`] whether to skip:
//!
//! ```no_run
//! use vk_baton_context::requirements::Need;
//! # fn f(ctx: &vk_baton_context::Context) {
//! if ctx.machine().skips(&[Need::SUBMIT_TIME_VALIDATION]) {
//!     return; // the skip was reported
//! }
//! // ... plant a hazard across two submits and assert that the layer reports it
//! # }
//! ```
//!
//! What the machine has is read from what it reports, never inferred from a check that did not
//! fire: the layer's version is `spec_version` of `VK_LAYER_KHRONOS_validation` from
//! `vkEnumerateInstanceLayerProperties`, the device's extensions and features come from its
//! own queries, and a program is looked up on `PATH`.
//!
//! **A skip is visible.** It writes one line, `SKIPPED <test>: needs <what>; <what the machine
//! has>`, straight to the process's standard error: libtest captures only `print!` and
//! `eprint!`, so the line shows in `cargo test`'s output although the test passes. When
//! `VK_BATON_SKIP_LOG` names a file, the line is appended to it too (CI prints that list at
//! the end).
//!
//! **Strict mode.** `VK_BATON_REQUIRE` lists what the machine must have, separated by commas
//! or spaces; a skip for anything on that list fails the test instead ([`Machine::skips`]
//! panics). CI sets it, so that a CI machine that lost an extension or got an older layer
//! fails rather than skips:
//!
//! - `layer>=1.4.309`: a validation layer of that version or newer;
//! - `VK_KHR_ray_query` (any name starting with `VK_`): that device extension;
//! - `feature:meshShader`: that device feature, by the specification's name
//!   ([`DeviceFeatures::names`](vk_baton::access::DeviceFeatures::names));
//! - `program:xvfb-run`: that program on `PATH`;
//! - `python:html5lib`: a module `python3` imports.

use ash::vk;
use std::borrow::Cow;
use std::fmt;
use std::io::Write;
use std::path::Path;
use vk_baton::access::DeviceFeatures;

/// The environment variable that lists what the machine must have ([strict mode](self)).
pub const REQUIRE_VAR: &str = "VK_BATON_REQUIRE";
/// The environment variable that names a file every skip line is appended to.
pub const SKIP_LOG_VAR: &str = "VK_BATON_SKIP_LOG";

/// A validation layer's version, `major.minor.patch` (the `spec_version` the layer reports),
/// ordered as versions are.
///
/// ```
/// use vk_baton_context::requirements::LayerVersion;
/// let old: LayerVersion = "1.3.239".parse().unwrap();
/// assert!(old < LayerVersion::new(1, 4, 309));
/// assert_eq!(old.to_string(), "1.3.239");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LayerVersion {
    /// The major version.
    pub major: u32,
    /// The minor version.
    pub minor: u32,
    /// The patch version (the header version the layer was built from).
    pub patch: u32,
}

impl LayerVersion {
    /// The oldest version: `0.0.0`.
    pub const MIN: LayerVersion = LayerVersion::new(0, 0, 0);
    /// Past every version a layer reports (for an open-ended range).
    pub const MAX: LayerVersion = LayerVersion::new(u32::MAX, u32::MAX, u32::MAX);

    /// `major.minor.patch`.
    pub const fn new(major: u32, minor: u32, patch: u32) -> LayerVersion {
        LayerVersion {
            major,
            minor,
            patch,
        }
    }

    /// The version packed as `VkLayerProperties::specVersion` packs it
    /// (`VK_MAKE_API_VERSION`; the variant is ignored).
    ///
    /// ```
    /// use vk_baton_context::requirements::LayerVersion;
    /// let packed = vk_baton::ash::vk::make_api_version(0, 1, 4, 309);
    /// assert_eq!(LayerVersion::from_spec_version(packed), LayerVersion::new(1, 4, 309));
    /// ```
    pub const fn from_spec_version(packed: u32) -> LayerVersion {
        LayerVersion::new(
            vk::api_version_major(packed),
            vk::api_version_minor(packed),
            vk::api_version_patch(packed),
        )
    }
}

impl fmt::Display for LayerVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

impl std::str::FromStr for LayerVersion {
    type Err = String;
    fn from_str(s: &str) -> Result<LayerVersion, String> {
        let parts: Vec<&str> = s.trim().split('.').collect();
        let numbers: Option<Vec<u32>> = parts.iter().map(|p| p.parse().ok()).collect();
        match numbers.as_deref() {
            Some(&[major, minor, patch]) => Ok(LayerVersion::new(major, minor, patch)),
            _ => Err(format!("`{s}` is not a layer version such as 1.4.309")),
        }
    }
}

/// Something optional a test needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Need {
    /// `VK_LAYER_KHRONOS_validation` of this version or newer.
    ValidationLayer(LayerVersion),
    /// A device extension, by name (`VK_KHR_ray_query`).
    DeviceExtension(Cow<'static, str>),
    /// Device features (with their extensions), as the context enables them
    /// ([`ContextOptions::device_features`](super::ContextOptions::device_features)).
    DeviceFeatures(DeviceFeatures),
    /// A program on `PATH` (`xvfb-run`).
    Program(Cow<'static, str>),
    /// A module that `python3` imports (`html5lib`, which checks the HTML reports parse).
    PythonModule(Cow<'static, str>),
}

impl Need {
    /// A layer that checks synchronization at submit time, across submits and queues: 1.4.309
    /// or newer.
    pub const SUBMIT_TIME_VALIDATION: Need = Need::ValidationLayer(LayerVersion::new(1, 4, 309));
    /// `xvfb-run`, which starts a virtual X server for the window samples.
    pub const XVFB: Need = Need::Program(Cow::Borrowed("xvfb-run"));

    /// The device extension `name`.
    pub const fn device_extension(name: &'static str) -> Need {
        Need::DeviceExtension(Cow::Borrowed(name))
    }

    /// Parses one entry of `VK_BATON_REQUIRE` (see [the module](self)).
    ///
    /// ```
    /// use vk_baton_context::requirements::{LayerVersion, Need};
    /// assert_eq!(Need::parse("layer>=1.4.309"), Ok(Need::SUBMIT_TIME_VALIDATION));
    /// assert_eq!(Need::parse("program:xvfb-run"), Ok(Need::XVFB));
    /// assert!(Need::parse("ray tracing").is_err());
    /// ```
    pub fn parse(entry: &str) -> Result<Need, String> {
        let entry = entry.trim();
        if let Some(version) = entry.strip_prefix("layer>=") {
            return Ok(Need::ValidationLayer(version.parse()?));
        }
        if let Some(name) = entry.strip_prefix("feature:") {
            let feature = feature_named(name)
                .ok_or_else(|| format!("`{name}` is not a device feature vk-baton knows"))?;
            return Ok(Need::DeviceFeatures(feature));
        }
        if let Some(program) = entry.strip_prefix("program:").filter(|p| !p.is_empty()) {
            return Ok(Need::Program(Cow::Owned(program.to_owned())));
        }
        if let Some(module) = entry.strip_prefix("python:").filter(|p| !p.is_empty()) {
            return Ok(Need::PythonModule(Cow::Owned(module.to_owned())));
        }
        if entry.starts_with("VK_") {
            return Ok(Need::DeviceExtension(Cow::Owned(entry.to_owned())));
        }
        Err(format!(
            "`{entry}` is not a requirement: write layer>=X.Y.Z, VK_<extension>, \
             feature:<name>, program:<name> or python:<module>"
        ))
    }

    /// Whether strict mode's `required` asks for (part of) this need: the same extension or
    /// program, a feature of `required`'s, or a layer version no newer than `required`'s.
    fn is_implied_by(&self, required: &Need) -> bool {
        match (self, required) {
            (Need::ValidationLayer(v), Need::ValidationLayer(r)) => v <= r,
            (Need::DeviceExtension(e), Need::DeviceExtension(r)) => e == r,
            (Need::DeviceFeatures(f), Need::DeviceFeatures(r)) => super::extension_features::EACH
                .into_iter()
                .any(|one| f.contains(one) && r.contains(one)),
            (Need::Program(p), Need::Program(r)) => p == r,
            (Need::PythonModule(p), Need::PythonModule(r)) => p == r,
            _ => false,
        }
    }
}

impl fmt::Display for Need {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Need::ValidationLayer(v) => write!(f, "validation layer {v} or newer"),
            Need::DeviceExtension(e) => write!(f, "device extension {e}"),
            Need::DeviceFeatures(d) => {
                write!(
                    f,
                    "device features {}",
                    d.names().collect::<Vec<_>>().join(", ")
                )
            }
            Need::Program(p) => write!(f, "program `{p}` on PATH"),
            Need::PythonModule(m) => write!(f, "python3 module `{m}`"),
        }
    }
}

/// The feature the specification calls `name`, among those vk-baton knows.
fn feature_named(name: &str) -> Option<DeviceFeatures> {
    super::extension_features::EACH
        .into_iter()
        .find(|f| f.names().eq([name]))
}

/// What the machine running a test has, as it reported it: the validation layer's version,
/// the device's extensions and the device features vk-baton knows. Made by
/// [`Context::machine`](super::Context::machine).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Machine {
    /// `VK_LAYER_KHRONOS_validation`'s version, if the layer is installed.
    pub validation_layer: Option<LayerVersion>,
    /// The device's extensions.
    pub device_extensions: Vec<String>,
    /// The features of [`DeviceFeatures`] the device has, with their extensions.
    pub device_features: DeviceFeatures,
}

impl Machine {
    /// What the machine lacks of `need`, in words, or `None` if it has it.
    ///
    /// ```
    /// use vk_baton_context::requirements::{LayerVersion, Machine, Need};
    /// let old = Machine { validation_layer: Some(LayerVersion::new(1, 3, 239)), ..Default::default() };
    /// assert_eq!(old.lacks(&Need::SUBMIT_TIME_VALIDATION).unwrap(), "this machine's is 1.3.239");
    /// ```
    pub fn lacks(&self, need: &Need) -> Option<String> {
        match need {
            Need::ValidationLayer(v) => match self.validation_layer {
                Some(have) if have >= *v => None,
                Some(have) => Some(format!("this machine's is {have}")),
                None => Some("no validation layer is installed".into()),
            },
            Need::DeviceExtension(e) => (!self.device_extensions.iter().any(|x| x == e))
                .then(|| "the device does not have it".into()),
            Need::DeviceFeatures(f) => {
                let missing = f.without(self.device_features);
                (!missing.is_empty()).then(|| {
                    let names: Vec<_> = missing.names().collect();
                    format!("the device lacks {}", names.join(", "))
                })
            }
            Need::Program(p) => (!on_path(p)).then(|| "it is not installed".into()),
            Need::PythonModule(m) => {
                (!python_imports(m)).then(|| "python3 cannot import it".into())
            }
        }
    }

    /// Whether the test that calls it skips: `true` when the machine lacks one of `needs`,
    /// after writing the skip line (see [the module](self)); `false` when it has them all.
    ///
    /// # Panics
    ///
    /// In strict mode, when `VK_BATON_REQUIRE` lists something the machine lacks (the test
    /// fails rather than skips), or when that variable does not parse.
    pub fn skips(&self, needs: &[Need]) -> bool {
        self.skips_check(None, needs)
    }

    /// As [`Machine::skips`], for one check within a test: the test goes on, without that
    /// check, when this returns `true`. The skip line names the check.
    ///
    /// ```no_run
    /// use vk_baton_context::requirements::Need;
    /// # fn f(ctx: &vk_baton_context::Context, out: &str) {
    /// let fences = Need::device_extension("VK_EXT_swapchain_maintenance1");
    /// if !ctx.machine().skips_part("present fences", &[fences]) {
    ///     assert!(out.contains("present fences: on"));
    /// }
    /// # }
    /// ```
    ///
    /// # Panics
    ///
    /// As [`Machine::skips`].
    pub fn skips_part(&self, check: &str, needs: &[Need]) -> bool {
        self.skips_check(Some(check), needs)
    }

    fn skips_check(&self, check: Option<&str>, needs: &[Need]) -> bool {
        let required = required_from_env().unwrap_or_else(|e| panic!("{REQUIRE_VAR}: {e}"));
        let test = std::thread::current().name().unwrap_or("a test").to_owned();
        let test = match check {
            Some(c) => format!("{test} [{c}]"),
            None => test,
        };
        match self.decide(&test, needs, &required) {
            Decision::Run => false,
            Decision::Skip(line) => {
                report_skip(&line);
                true
            }
            Decision::Fail(message) => panic!("{message}"),
        }
    }

    /// What `test` does with `needs` on this machine when `required` is what strict mode
    /// lists.
    fn decide(&self, test: &str, needs: &[Need], required: &[Need]) -> Decision {
        let missing: Vec<(&Need, String)> = needs
            .iter()
            .filter_map(|n| self.lacks(n).map(|why| (n, why)))
            .collect();
        if missing.is_empty() {
            return Decision::Run;
        }
        // What strict mode judges: of a set of features, only those the machine lacks.
        let lacking = |n: &Need| match n {
            Need::DeviceFeatures(f) => Need::DeviceFeatures(f.without(self.device_features)),
            other => other.clone(),
        };
        let what = missing
            .iter()
            .map(|(n, why)| format!("{n} ({why})"))
            .collect::<Vec<_>>()
            .join(", ");
        match missing
            .iter()
            .find(|(n, _)| required.iter().any(|r| lacking(n).is_implied_by(r)))
        {
            Some((n, _)) => Decision::Fail(format!(
                "{test} needs {what}; {REQUIRE_VAR} requires {n}, so it may not skip"
            )),
            None => Decision::Skip(format!("SKIPPED {test}: needs {what}")),
        }
    }
}

/// What a test does about its needs.
#[derive(Debug, PartialEq, Eq)]
enum Decision {
    /// The machine has them all.
    Run,
    /// It skips, with this line.
    Skip(String),
    /// It fails: strict mode requires something the machine lacks.
    Fail(String),
}

impl super::Context {
    /// The installed `VK_LAYER_KHRONOS_validation`'s version, as
    /// `vkEnumerateInstanceLayerProperties` reports it, or `None` without the layer.
    pub fn validation_layer(&self) -> Option<LayerVersion> {
        self.messages.layer.get().copied()
    }

    /// What this machine has, as its layer and device report it: for tests that skip without
    /// something optional ([the requirements module](self)).
    ///
    /// ```no_run
    /// use vk_baton_context::requirements::Need;
    /// # fn f(ctx: &vk_baton_context::Context) {
    /// if ctx.machine().skips(&[Need::device_extension("VK_KHR_ray_query")]) {
    ///     return;
    /// }
    /// # }
    /// ```
    pub fn machine(&self) -> Machine {
        // SAFETY: the context's live instance and its physical device.
        let (device_extensions, device_features) =
            unsafe { super::features::supported(&self.instance, self.physical_device) };
        Machine {
            validation_layer: self.validation_layer(),
            device_extensions,
            device_features,
        }
    }
}

/// What `VK_BATON_REQUIRE` lists (nothing if it is unset).
fn required_from_env() -> Result<Vec<Need>, String> {
    parse_required(&std::env::var(REQUIRE_VAR).unwrap_or_default())
}

/// Parses a `VK_BATON_REQUIRE` list: entries separated by commas or white space.
fn parse_required(list: &str) -> Result<Vec<Need>, String> {
    list.split(|c: char| c == ',' || c.is_whitespace())
        .filter(|e| !e.is_empty())
        .map(Need::parse)
        .collect()
}

/// Writes the skip line past libtest's capture (a direct write to the standard error handle;
/// `eprintln!` would be captured), and appends it to `VK_BATON_SKIP_LOG`'s file if set.
fn report_skip(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
    if let Some(path) = std::env::var_os(SKIP_LOG_VAR).filter(|p| !p.is_empty()) {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path);
        // One write per line: appends of whole lines from parallel tests do not interleave.
        if let Err(e) = file.and_then(|mut f| f.write_all(format!("{line}\n").as_bytes())) {
            let _ = writeln!(
                std::io::stderr(),
                "cannot append to {SKIP_LOG_VAR} ({}): {e}",
                Path::new(&path).display()
            );
        }
    }
}

/// Whether `program` is a file in one of `PATH`'s directories.
/// Whether `python3` runs and imports `module`.
fn python_imports(module: &str) -> bool {
    let import = format!("import {module}");
    let status = std::process::Command::new("python3")
        .args(["-c", &import])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
    status.is_ok_and(|s| s.success())
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layer_versions_parse_and_order() {
        assert_eq!("1.4.309".parse(), Ok(LayerVersion::new(1, 4, 309)));
        assert!(LayerVersion::new(1, 3, 239) < LayerVersion::new(1, 4, 0));
        assert!(LayerVersion::new(1, 4, 363) > LayerVersion::new(1, 4, 309));
        for bad in ["1.4", "1.4.x", "", "1.4.309.1"] {
            assert!(bad.parse::<LayerVersion>().is_err(), "{bad}");
        }
        let packed = vk::make_api_version(0, 1, 3, 239);
        assert_eq!(
            LayerVersion::from_spec_version(packed).to_string(),
            "1.3.239"
        );
    }

    #[test]
    fn the_required_list_parses_each_kind_and_refuses_unknown_entries() {
        let list =
            "layer>=1.4.309, VK_KHR_ray_query feature:meshShader,program:xvfb-run python:html5lib";
        assert_eq!(
            parse_required(list),
            Ok(vec![
                Need::SUBMIT_TIME_VALIDATION,
                Need::device_extension("VK_KHR_ray_query"),
                Need::DeviceFeatures(DeviceFeatures::MESH_SHADER),
                Need::XVFB,
                Need::PythonModule("html5lib".into()),
            ])
        );
        assert_eq!(parse_required(" , "), Ok(vec![]));
        for bad in [
            "mesa25",
            "layer>=new",
            "feature:warp",
            "program:",
            "python:",
        ] {
            assert!(parse_required(bad).is_err(), "{bad}");
        }
    }

    /// Strict mode covers a need when the list requires it or more: a newer layer, a superset
    /// of features; never another kind.
    #[test]
    fn a_requirement_covers_what_it_implies() {
        let layer = |p| Need::ValidationLayer(LayerVersion::new(1, 4, p));
        assert!(layer(309).is_implied_by(&layer(309)));
        assert!(layer(309).is_implied_by(&layer(363)));
        assert!(!layer(341).is_implied_by(&layer(309)));
        let f = |f| Need::DeviceFeatures(f);
        let both = DeviceFeatures::MESH_SHADER | DeviceFeatures::TASK_SHADER;
        assert!(f(DeviceFeatures::MESH_SHADER).is_implied_by(&f(both)));
        assert!(f(both).is_implied_by(&f(DeviceFeatures::MESH_SHADER)));
        assert!(!f(both).is_implied_by(&f(DeviceFeatures::RAY_QUERY)));
        let ext = Need::device_extension("VK_EXT_mesh_shader");
        assert!(ext.is_implied_by(&ext.clone()));
        assert!(!ext.is_implied_by(&Need::device_extension("VK_KHR_ray_query")));
        assert!(!Need::XVFB.is_implied_by(&ext));
    }

    #[test]
    fn a_machine_lacks_what_it_did_not_report() {
        let m = Machine {
            validation_layer: Some(LayerVersion::new(1, 3, 239)),
            device_extensions: vec!["VK_KHR_swapchain".into()],
            device_features: DeviceFeatures::MESH_SHADER,
        };
        assert!(m.lacks(&Need::SUBMIT_TIME_VALIDATION).is_some());
        assert!(m
            .lacks(&Need::ValidationLayer(LayerVersion::new(1, 3, 0)))
            .is_none());
        assert!(m
            .lacks(&Need::device_extension("VK_KHR_swapchain"))
            .is_none());
        assert!(m
            .lacks(&Need::device_extension("VK_KHR_ray_query"))
            .is_some());
        let both = DeviceFeatures::MESH_SHADER | DeviceFeatures::TASK_SHADER;
        assert_eq!(
            m.lacks(&Need::DeviceFeatures(both)).as_deref(),
            Some("the device lacks taskShader")
        );
        assert!(Machine::default()
            .lacks(&Need::SUBMIT_TIME_VALIDATION)
            .is_some());
        assert!(m.lacks(&Need::Program("sh".into())).is_none());
        assert!(m
            .lacks(&Need::Program("no-such-program-x".into()))
            .is_some());
        assert!(m.lacks(&Need::PythonModule("json".into())).is_none());
        assert!(m
            .lacks(&Need::PythonModule("no_such_module_x".into()))
            .is_some());
    }

    /// A skip names the test and what is missing; strict mode turns the skip of anything it
    /// lists into a failure, and leaves other skips alone.
    #[test]
    fn strict_mode_fails_a_skip_of_what_it_requires() {
        let old = Machine {
            validation_layer: Some(LayerVersion::new(1, 3, 239)),
            ..Default::default()
        };
        let rq = Need::device_extension("VK_KHR_ray_query");
        assert_eq!(old.decide("t", &[], &[]), Decision::Run);
        assert_eq!(
            old.decide("t", &[Need::SUBMIT_TIME_VALIDATION, rq.clone()], &[]),
            Decision::Skip(
                "SKIPPED t: needs validation layer 1.4.309 or newer (this machine's is \
                 1.3.239), device extension VK_KHR_ray_query (the device does not have it)"
                    .into()
            )
        );
        let strict = parse_required("layer>=1.4.309").unwrap();
        assert!(matches!(
            old.decide("t", &[Need::SUBMIT_TIME_VALIDATION], &strict),
            Decision::Fail(m) if m.contains("VK_BATON_REQUIRE requires validation layer 1.4.309")
        ));
        assert!(matches!(old.decide("t", &[rq], &strict), Decision::Skip(_)));
        // Of a set of features, strict mode judges those the machine lacks.
        let mesh = Machine {
            device_features: DeviceFeatures::MESH_SHADER,
            ..Default::default()
        };
        let both = Need::DeviceFeatures(DeviceFeatures::MESH_SHADER | DeviceFeatures::TASK_SHADER);
        let strict_mesh = parse_required("feature:meshShader").unwrap();
        assert!(matches!(
            mesh.decide("t", std::slice::from_ref(&both), &strict_mesh),
            Decision::Skip(_)
        ));
        let strict_task = parse_required("feature:taskShader").unwrap();
        assert!(matches!(
            mesh.decide("t", &[both], &strict_task),
            Decision::Fail(_)
        ));
        // A test that needs a layer newer than the one required may still skip.
        let newer = Need::ValidationLayer(LayerVersion::new(1, 4, 341));
        assert!(matches!(
            old.decide("t", &[newer], &strict),
            Decision::Skip(_)
        ));
    }
}
