//! What the verifier reports: a broken rule, who performed each side, and what kind of hazard
//! it is. Plain data at the bottom of the crate, so that [`Error`](super::Error) can carry it; the
//! checker itself is [`verify`](super::verify).

use std::fmt;

/// What kind of rule a [`Violation`] breaks.
///
/// ```
/// use vk_baton::verify::HazardKind;
/// assert_eq!(HazardKind::Raw.to_string(), "RAW");
/// assert_eq!(HazardKind::Ownership.to_string(), "ownership");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum HazardKind {
    /// Read after write.
    Raw,
    /// Write after read.
    War,
    /// Write after write.
    Waw,
    /// An image layout transition is unordered, or an access finds the wrong layout or
    /// discarded contents.
    Layout,
    /// A queue family ownership rule.
    Ownership,
    /// Conflicting passes run against program order.
    Order,
    /// The plan itself is malformed (a wait on a value never signalled, a deadlock, a pass
    /// recorded twice or never, ...).
    Structure,
}

impl fmt::Display for HazardKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Raw => "RAW",
            Self::War => "WAR",
            Self::Waw => "WAW",
            Self::Layout => "layout",
            Self::Ownership => "ownership",
            Self::Order => "order",
            Self::Structure => "structure",
        })
    }
}

/// Who performed one side of a [`Violation`].
///
/// ```
/// use vk_baton::verify::Actor;
/// let a = Actor::Pass { execution: 0, pass: 2, name: "shade".into() };
/// assert_eq!(a.to_string(), "pass `shade`");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Actor {
    /// A pass of execution `execution`.
    Pass {
        /// Index of the execution in the checked sequence.
        execution: usize,
        /// Index into that plan's passes.
        pass: usize,
        /// The pass's name.
        name: String,
    },
    /// A layout transition or ownership transfer of a barrier.
    Sync {
        /// Index of the execution in the checked sequence.
        execution: usize,
        /// The queue's name.
        queue: String,
        /// What it is and where.
        what: String,
    },
    /// Work of an earlier graph (an initial state with a timeline value).
    EarlierGraph,
    /// The app's own work (an initial state with nothing to wait for).
    App,
    /// The presentation engine, handing a swapchain image back through a binary semaphore.
    PresentationEngine {
        /// Index of the execution in the checked sequence.
        execution: usize,
    },
}

impl fmt::Display for Actor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Pass {
                execution: 0, name, ..
            } => write!(f, "pass `{name}`"),
            Self::Pass {
                execution, name, ..
            } => write!(f, "pass `{name}` (execution {execution})"),
            Self::Sync { queue, what, .. } => write!(f, "{what} on queue `{queue}`"),
            Self::EarlierGraph => f.write_str("earlier graph"),
            Self::App => f.write_str("app"),
            Self::PresentationEngine { .. } => f.write_str("presentation engine"),
        }
    }
}

/// One broken rule: the two operations, the resource and range, and what was missing.
///
/// ```
/// use vk_baton::verify::{Actor, HazardKind, Violation};
/// let v = Violation {
///     kind: HazardKind::Raw,
///     first: Some(Actor::App),
///     second: Some(Actor::Pass { execution: 0, pass: 0, name: "blit".into() }),
///     resource: Some("img".into()),
///     range: Some("mips 0..1 layers 0..1".into()),
///     missing: "memory dependency".into(),
/// };
/// assert_eq!(v.to_string(), "RAW on `img` mips 0..1 layers 0..1: app -> pass `blit`: missing memory dependency");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The kind of hazard.
    pub kind: HazardKind,
    /// The earlier operation, if the rule involves one.
    pub first: Option<Actor>,
    /// The later operation.
    pub second: Option<Actor>,
    /// The resource's name.
    pub resource: Option<String>,
    /// The mips/layers or bytes concerned.
    pub range: Option<String>,
    /// What was missing or wrong.
    pub missing: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.kind)?;
        if let Some(r) = &self.resource {
            write!(f, " on `{r}`")?;
        }
        if let Some(r) = &self.range {
            write!(f, " {r}")?;
        }
        f.write_str(":")?;
        match (&self.first, &self.second) {
            (Some(a), Some(b)) => write!(f, " {a} -> {b}:")?,
            (None, Some(b)) => write!(f, " {b}:")?,
            _ => {}
        }
        write!(f, " missing {}", self.missing)
    }
}

/// The violations one per line, as [`Error::Verification`](crate::Error::Verification) prints
/// them.
pub(crate) fn lines(violations: &[Violation]) -> String {
    let lines: Vec<String> = violations.iter().map(Violation::to_string).collect();
    lines.join("\n")
}
