//! What the samples share: command-line parsing that rejects unknown options, SPIR-V loading,
//! logging, the validation report and the exit status, and a guard that waits for executions
//! in flight.
//!
//! Nothing here is vk-baton API: it is the boilerplate every Vulkan app has somewhere. The
//! compute work itself goes through the stock `vk_baton_passes::ComputeDispatch`.

use std::collections::VecDeque;
use vk_baton::ash::vk;
use vk_baton::ExecutionFence;
use vk_baton_context::Context;

pub use lexopt::{Parser, ValueExt};

/// Executions in flight, oldest first, each with a tag (a frame number, say). Dropping it
/// waits for each, so an early return (`?`) never destroys an object that the GPU may still
/// use and that no execution keeps alive by itself (a query pool, say): declare the guard
/// after such objects (locals drop in reverse order).
pub struct InFlight<K = ()>(pub VecDeque<(K, ExecutionFence)>);

impl<K> InFlight<K> {
    /// No execution in flight.
    pub fn new() -> Self {
        Self(VecDeque::new())
    }
}

impl<K> Default for InFlight<K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K> Drop for InFlight<K> {
    fn drop(&mut self) {
        for (_, fence) in self.0.drain(..) {
            if let Err(e) = fence.wait() {
                eprintln!("an execution in flight failed: {e}");
            }
        }
    }
}

/// Maps a Vulkan error to the library's error type.
pub fn vkerr(call: &'static str) -> impl Fn(vk::Result) -> vk_baton::Error {
    move |e| vk_baton::Error::vk(call, e)
}

/// SPIR-V bytes as the 32-bit words `vkCreateShaderModule` takes, via
/// [`ash::util::read_spv`](vk_baton::ash::util::read_spv) (an error if the length is not a
/// whole number of words).
pub fn spirv(bytes: &[u8]) -> vk_baton::Result<Vec<u32>> {
    vk_baton::ash::util::read_spv(&mut std::io::Cursor::new(bytes))
        .map_err(|e| vk_baton::Error::InvalidInput(format!("SPIR-V: {e}")))
}

/// Push-constant bytes from u32s.
pub fn push_u32s(values: &[u32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Writes the plan's diagram ([`Plan::to_svg`](vk_baton::plan::Plan::to_svg)) to `path`:
/// the samples' `plan.svg` and `--plan-svg PATH`.
pub fn write_plan_svg(path: &std::path::Path, plan: &vk_baton::plan::Plan) -> vk_baton::Result<()> {
    std::fs::write(path, plan.to_svg())
        .map_err(|e| vk_baton::Error::InvalidInput(format!("{}: {e}", path.display())))?;
    println!("wrote {} (the plan's diagram)", path.display());
    Ok(())
}

/// Parses the command line with lexopt. `option(name, parser)` handles the long option
/// `--name` (reading its value with `parser.value()?.parse()?` where it takes one) and returns
/// `Ok(false)` for a name it does not know. `--help` prints `usage` and exits with status 0;
/// an unknown option, a stray value, a missing value or one that does not parse prints the
/// error and `usage` and exits with status 2.
///
/// ```no_run
/// use support::ValueExt; // `parse()` on the value
/// let mut frames = 2u32;
/// support::parse_args("usage: sample [--frames N]", |name, p| {
///     match name {
///         "frames" => frames = p.value()?.parse()?,
///         _ => return Ok(false),
///     }
///     Ok(true)
/// });
/// ```
pub fn parse_args(
    usage: &str,
    option: impl FnMut(&str, &mut Parser) -> Result<bool, lexopt::Error>,
) {
    match parse_from(Parser::from_env(), option) {
        Ok(Parsed::Options) => {}
        Ok(Parsed::Help) => {
            println!("{usage}");
            std::process::exit(0);
        }
        Err(e) => {
            eprintln!("error: {e}\n{usage}");
            std::process::exit(2);
        }
    }
}

/// What [`parse_from`] found.
#[derive(Debug, PartialEq)]
enum Parsed {
    /// Options only (all handled).
    Options,
    /// `--help` or `-h` (parsing stopped there).
    Help,
}

/// [`parse_args`] without the exits.
fn parse_from(
    mut p: Parser,
    mut option: impl FnMut(&str, &mut Parser) -> Result<bool, lexopt::Error>,
) -> Result<Parsed, lexopt::Error> {
    use lexopt::Arg;
    while let Some(arg) = p.next()? {
        let name = match arg {
            Arg::Long("help") | Arg::Short('h') => return Ok(Parsed::Help),
            Arg::Long(name) => name.to_owned(),
            other => return Err(other.unexpected()),
        };
        match option(&name, &mut p) {
            Ok(true) => {}
            Ok(false) => return Err(lexopt::Error::UnexpectedOption(format!("--{name}"))),
            // lexopt's parse error quotes the value but not the option it was given to.
            Err(lexopt::Error::ParsingFailed { value, error }) => {
                return Err(format!("--{name} {value:?}: {error}").into())
            }
            Err(e) => return Err(e),
        }
    }
    Ok(Parsed::Options)
}

/// Installs a logger that prints warnings (validation messages included).
pub fn init_logging() {
    let _ = env_logger::builder()
        .filter_level(log::LevelFilter::Warn)
        .parse_default_env()
        .try_init();
}

/// Prints the validation summary line every sample ends with, and returns the count of
/// messages the sample did not allow ([`Context::allow_message`]). The integration test looks
/// for `validation: N message(s)`; the IDs of allowed messages follow it.
pub fn report_validation(ctx: &Context) -> usize {
    let m = ctx.unexpected_messages();
    println!(
        "validation: {} message(s) ({})",
        m.count,
        if ctx.validation() {
            "layer on, with synchronization validation"
        } else {
            "layer off: set VK_BATON_VALIDATION=1 to turn it on"
        }
    );
    for x in &m.messages {
        println!("  - {}", x.text);
    }
    let mut allowed: Vec<String> = ctx
        .validation_messages()
        .messages
        .into_iter()
        .filter(|x| !m.messages.contains(x))
        .map(|x| x.id)
        .collect();
    allowed.dedup();
    for id in allowed {
        println!("  allowed, as the sample expects: {id}");
    }
    m.count
}

/// Runs a sample's body and turns its outcome into the exit status: 0 on success with no
/// validation message, 1 when validation reported anything or a check failed, 2 on an error.
pub fn main_with(run: impl FnOnce() -> vk_baton::Result<bool>) -> ! {
    init_logging();
    match run() {
        Ok(true) => std::process::exit(0),
        Ok(false) => std::process::exit(1),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses `args` with a `--frames N` and a `--fast` option.
    fn parse(args: &[&str]) -> Result<(Parsed, Option<u32>, bool), String> {
        let (mut frames, mut fast) = (None, false);
        let args = std::iter::once("sample").chain(args.iter().copied());
        let parsed = parse_from(Parser::from_iter(args), |name, p| {
            match name {
                "frames" => frames = Some(p.value()?.parse()?),
                "fast" => fast = true,
                _ => return Ok(false),
            }
            Ok(true)
        })
        .map_err(|e| e.to_string())?;
        Ok((parsed, frames, fast))
    }

    #[test]
    fn known_options_parse_in_both_spellings() {
        use Parsed::*;
        assert_eq!(parse(&[]), Ok((Options, None, false)));
        assert_eq!(
            parse(&["--frames", "6", "--fast"]),
            Ok((Options, Some(6), true))
        );
        assert_eq!(
            parse(&["--fast", "--frames=7"]),
            Ok((Options, Some(7), true))
        );
        assert_eq!(
            parse(&["--frames", "3", "--help", "--bad"]),
            Ok((Help, Some(3), false))
        );
        assert_eq!(parse(&["-h"]), Ok((Help, None, false)));
    }

    #[test]
    fn unknown_options_stray_values_and_bad_values_are_errors() {
        assert_eq!(
            parse(&["--frames", "6", "--franes", "2"]),
            Err("invalid option '--franes'".into())
        );
        assert_eq!(parse(&["-x"]), Err("invalid option '-x'".into()));
        assert_eq!(
            parse(&["extra"]),
            Err("unexpected argument \"extra\"".into())
        );
        assert_eq!(
            parse(&["--frames", "six"]),
            Err("--frames \"six\": invalid digit found in string".into())
        );
        assert_eq!(
            parse(&["--frames"]),
            Err("missing argument for option '--frames'".into())
        );
        assert_eq!(
            parse(&["--fast=yes"]),
            Err("unexpected argument for option '--fast': \"yes\"".into())
        );
    }
}
