//! What a pass promises so that its recorded commands can be submitted again: a
//! [`ReplayKey`] that changes whenever its commands would, and [`Generation`], the counter
//! that stock passes keep one with.

use std::sync::atomic::{AtomicU64, Ordering};

/// What a pass's recorded commands depend on beyond the graph's own part (barriers, resources
/// and their states): equal keys promise equal commands. A pass returns one from
/// [`Pass::replay_key`](crate::Pass::replay_key) to let a graph with replay on
/// ([`Graph::set_replay`](crate::Graph::set_replay)) submit the command buffers it recorded
/// for an earlier execution again, instead of calling its `record()`.
///
/// Only [`ReplayKey::new`] makes one, and it is `unsafe`: the library cannot see what a pass
/// records, so the pass vouches for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ReplayKey {
    value: u64,
    /// [`Pass::replayed`](crate::Pass::replayed) is called on each replay.
    calls_replayed: bool,
}

impl ReplayKey {
    /// A key with this value.
    ///
    /// # Safety
    ///
    /// A graph compares keys by the pass's position in the frame, not by pass object: a frame
    /// whose declarations match an earlier one's, and whose pass at each position returns the
    /// key that position returned then (from this pass object or another), submits that
    /// frame's recording again. So whenever a pass returns this key, its `record()` would
    /// record the same commands as every pass that returned it before, at that position of a
    /// frame of the same shape:
    /// - the same commands in the same order, with the same push constants and dynamic state;
    /// - naming the same objects (pipelines, layouts, descriptor sets, samplers, views), none
    ///   destroyed since, no descriptor set updated, freed or reset since (unless its
    ///   updated bindings allow it with `UPDATE_AFTER_BIND` or `UPDATE_UNUSED_WHILE_PENDING`),
    ///   and no descriptor pool reset;
    /// - executing only secondary command buffers made with `SIMULTANEOUS_USE`, not recorded
    ///   again, reset or freed while the key stands (recording one without it into another
    ///   primary makes the kept primary invalid);
    /// - needing no side effect of `record()` in a replayed frame, where it is not called (a
    ///   completion token, a counter, a ring index). What it gave to
    ///   [`Recorder::keep_alive`](crate::Recorder::keep_alive) is kept with the recording,
    ///   for as long as the recording may be submitted.
    ///
    /// Commands that name the objects the graph binds to its transients (their handles and
    /// views, or a descriptor set written from them) may differ from one recording to
    /// another: the graph keys recordings on those objects too.
    ///
    /// The key changes only through `&mut self`, or through state the pass shares with the
    /// app that does not change during an execution. A builder asks for the keys at every
    /// execution; a held plan, which borrows its passes exclusively, asks once after each
    /// recording (and the passes whose [`Pass::replayed`](crate::Pass::replayed) ran, after
    /// each replay), so after changing such state the app calls
    /// [`HeldPlan::refresh_replay_keys`](crate::HeldPlan::refresh_replay_keys) before the
    /// held plan's next execution.
    ///
    /// What may change between replays is the contents of buffers and images: the host may
    /// write uniforms, indirect arguments or instance data that the commands read. A pass
    /// whose commands changed returns another key. [`Generation`] makes keys that no two
    /// pass objects share, which is what a pass made anew each frame needs; a constant key
    /// is right only for a pass whose commands never change (one that records nothing).
    ///
    /// ```
    /// use vk_baton::pass::ReplayKey;
    /// // SAFETY (example): the pass this key is for records no command.
    /// let key = unsafe { ReplayKey::new(0) };
    /// assert_eq!(key.get(), 0);
    /// ```
    pub const unsafe fn new(value: u64) -> Self {
        Self {
            value,
            calls_replayed: false,
        }
    }

    /// The same key, for a pass whose `record()` also does bookkeeping that every execution
    /// needs (which execution used a semaphore, say): on a replay,
    /// [`Pass::replayed`](crate::Pass::replayed) is called in its place.
    ///
    /// ```
    /// use vk_baton::pass::ReplayKey;
    /// // SAFETY (example): the pass records no command.
    /// let key = unsafe { ReplayKey::new(0) }.calling_replayed();
    /// assert_ne!(key, unsafe { ReplayKey::new(0) });
    /// ```
    pub const fn calling_replayed(self) -> Self {
        Self {
            calls_replayed: true,
            ..self
        }
    }

    /// Whether a replay calls [`Pass::replayed`](crate::Pass::replayed).
    pub(crate) const fn calls_replayed(self) -> bool {
        self.calls_replayed
    }

    /// The key's value.
    pub const fn get(self) -> u64 {
        self.value
    }
}

/// Every generation ever handed out is distinct: two passes never share one, even after one
/// is dropped and another made in its place.
static NEXT_GENERATION: AtomicU64 = AtomicU64::new(1);

/// A counter for [`ReplayKey`]s: new values come from one process-wide sequence, so a new
/// pass, or a pass that bumped its generation, never matches a recording made before.
///
/// A pass keeps one, bumps it in every setter that changes what it records, and returns it
/// as its key:
///
/// ```
/// use vk_baton::pass::{Generation, ReplayKey};
/// use vk_baton::{Declare, Pass, Recorder};
///
/// struct Dispatch { groups: [u32; 3], generation: Generation }
///
/// impl Dispatch {
///     fn set_groups(&mut self, groups: [u32; 3]) {
///         self.groups = groups;
///         self.generation.bump();
///     }
/// }
///
/// impl Pass for Dispatch {
///     fn declare(&self, _d: &mut Declare<'_>) {}
///     fn record(&mut self, _r: &mut Recorder<'_>) -> vk_baton::Result<()> { Ok(()) }
///     fn replay_key(&self) -> Option<ReplayKey> {
///         // SAFETY: every field `record` reads changes only in a setter that bumps the
///         // generation, and the pass owns what its commands name.
///         Some(unsafe { self.generation.key() })
///     }
/// }
/// ```
#[derive(Debug, PartialEq, Eq)]
pub struct Generation(u64);

impl Generation {
    /// A generation no other has had.
    ///
    /// ```
    /// use vk_baton::pass::Generation;
    /// assert_ne!(Generation::new(), Generation::new());
    /// ```
    pub fn new() -> Self {
        Self(NEXT_GENERATION.fetch_add(1, Ordering::Relaxed))
    }

    /// Moves to a generation no other has had: what the pass records changed.
    ///
    /// ```
    /// use vk_baton::pass::Generation;
    /// let mut g = Generation::new();
    /// let before = g.get();
    /// g.bump();
    /// assert_ne!(g.get(), before);
    /// ```
    pub fn bump(&mut self) {
        *self = Self::new();
    }

    /// The generation's value.
    pub fn get(&self) -> u64 {
        self.0
    }

    /// The generation as a replay key.
    ///
    /// # Safety
    ///
    /// As [`ReplayKey::new`]: the pass bumps the generation (through `&mut self`) whenever
    /// what it records changes, and what its commands name lives as long as the key stands.
    pub unsafe fn key(&self) -> ReplayKey {
        // SAFETY: the caller's contract is `ReplayKey::new`'s.
        unsafe { ReplayKey::new(self.0) }
    }
}

impl Default for Generation {
    fn default() -> Self {
        Self::new()
    }
}

/// A clone is another pass's: it gets a generation of its own.
impl Clone for Generation {
    fn clone(&self) -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generations_are_never_shared() {
        let a = Generation::new();
        let b = a.clone();
        let mut c = Generation::default();
        let before = c.get();
        c.bump();
        let values = [a.get(), b.get(), before, c.get()];
        for (i, x) in values.iter().enumerate() {
            assert!(!values[i + 1..].contains(x), "{values:?}");
        }
    }
}
