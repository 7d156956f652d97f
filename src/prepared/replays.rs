//! [`Replays`]: the command buffers a prepared frame recorded for its plan, kept to be
//! submitted again ([`crate::Graph::set_replay`]).
//!
//! A frame keeps at most [`SETS`] recorded sets: one per execution in flight, as a frame
//! loop with two frames in flight needs, and one more. A set belongs to the frame's plan: a
//! new plan ([`Replays::forget`]) gives every set back to the graph's pools. Besides the plan,
//! a set is checked against what its commands were recorded from ([`ReplayKeys`]): each
//! pass's [`ReplayKey`](crate::pass::ReplayKey), each transient's bound object (so each heap
//! set in flight has recordings of its own), each resource's identity (not its handle, which
//! Vulkan may give a new object after a destroy), whether labels were recorded (or GPU
//! timings, and then the passes' names, which both show), the layout
//! policy, and the graph's epoch
//! ([`crate::Graph::invalidate_recordings`]).
//!
//! A set is submitted again only when its last submission completed (its command buffers
//! are recorded without `SIMULTANEOUS_USE`). Its barriers are its plan's: a frame reused at
//! any tier has the plan the planner would make for it (only timeline values and binary
//! semaphores move, and those are in the submit, not the command buffers), and a frame whose
//! resources' states changed in a way that matters gets a new plan. Its command buffers come
//! from the graph's pools and go back there when the frame is dropped, or when the app drops
//! a resource the set names ([`Replays::forget_dropped`]: its commands name a destroyed
//! handle), through the same path as an execution's ([`Pools::dropped`], which takes no
//! lock), once the GPU is done with them.
//!
//! A pass's key changes only through `&mut self` ([`ReplayKey::new`](crate::pass::ReplayKey::new)): the keys of a held
//! plan's passes, which the held plan borrows exclusively, are asked for once, and again when
//! the app says they changed ([`Replays::keys_held`], [`crate::HeldPlan::refresh_replay_keys`])
//! or they recorded; after a replay, only the passes whose [`crate::Pass::replayed`] ran.

use crate::access::LayoutPolicy;
use crate::completion::CompletionToken;
use crate::extensions::KeptExtensions;
use crate::fence::{InFlight, Lists, PoolKey, Pools};
use crate::plan::Plan;
use crate::prepared::scratch::BatchTables;
use crate::resource::{Resource, WeakResource};
use ash::vk;
use std::any::Any;
use std::sync::Arc;

/// An object a pass asked to keep alive ([`crate::Recorder::keep_alive`]).
type Kept = Box<dyn Any + Send + Sync>;

/// The most recorded sets a frame keeps: its memory is at most this many recordings of its
/// plan.
pub(crate) const SETS: usize = 3;

/// What a recording is checked against, besides the plan: see the module docs.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct ReplayKeys {
    /// Per pass (the plan's indices).
    /// Per pass (the plan's indices): its key's value.
    pub(crate) passes: Vec<u64>,
    /// The passes whose keys ask for [`crate::Pass::replayed`] on a replay.
    pub(crate) hooks: Vec<usize>,
    /// Per plan resource: [`crate::resource::Resource::id`].
    pub(crate) resources: Vec<u64>,
    /// Per plan resource, with transients: the object bound to it for this execution, by
    /// serial (its heap set's; 0 for the others). Empty without transients.
    pub(crate) bound: Vec<u64>,
    pub(crate) labels: bool,
    /// How GPU timings were on ([`crate::extensions::Extensions::timing_mode`]): whether the
    /// recording writes timestamps, and resets its queries itself or leaves it to the host.
    pub(crate) timed: u8,
    /// With labels or GPU timings on, a hash of the passes' names, which they show; 0
    /// without.
    pub(crate) names: u64,
    pub(crate) layouts: LayoutPolicy,
    pub(crate) epoch: u64,
}

impl ReplayKeys {
    /// Copies `other` in, keeping the allocations.
    fn copy_from(&mut self, other: &ReplayKeys) {
        self.passes.clone_from(&other.passes);
        self.hooks.clone_from(&other.hooks);
        self.resources.clone_from(&other.resources);
        self.bound.clone_from(&other.bound);
        (self.labels, self.names, self.timed) = (other.labels, other.names, other.timed);
        (self.layouts, self.epoch) = (other.layouts, other.epoch);
    }
}

/// One recording of the frame's plan.
struct RecordedSet {
    /// The command buffers, with the pools they go back to.
    cmds: Vec<(PoolKey, vk::CommandBuffer)>,
    /// What the passes asked to keep alive while recording it
    /// ([`crate::Recorder::keep_alive`]): kept as long as the recording may be submitted.
    keep: Vec<Kept>,
    /// What the optional parts keep for it (its timestamp queries).
    ext: KeptExtensions,
    /// Where each batch's command buffers are (no fences: each submission takes its own).
    tables: BatchTables,
    keys: ReplayKeys,
    /// Recorded for the frame's current plan.
    current: bool,
    /// The [`Replays::asked`] count at which its passes' keys were last found equal to the
    /// current ones (0: never).
    matched: u64,
    /// The last execution that submitted the set: pending until it completes.
    token: Option<CompletionToken>,
    /// When it was last submitted, on the frame's [`Replays::clock`].
    used: u64,
    /// The resources it names, by plan index: once the app dropped one, the set can never be
    /// submitted again ([`Replays::forget_dropped`]).
    named: Vec<WeakResource>,
    /// The commands it was recorded from, for debug builds to check each replay against.
    #[cfg(debug_assertions)]
    commands: Vec<crate::plan::Command>,
}

impl RecordedSet {
    /// Whether the GPU is done with it (a failed query counts as not done), and no fence of
    /// an execution of it still has to read what it wrote (its timestamps).
    fn idle(&self) -> bool {
        let done = (self.token.as_ref()).is_none_or(|t| t.poll().unwrap_or(false));
        done && !self.ext.in_use()
    }
}

/// Which of the passes' keys an execution asks for before it chooses a recording.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KeysToAsk {
    All,
    /// Only those of [`ReplayKeys::hooks`] (a held plan's, after a replay).
    Hooked,
    None,
}

/// What an execution does with the frame's recordings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Choice {
    /// Records into command buffers used once, as without replay.
    Record,
    /// Records into set `.0`, to be kept.
    Keep(usize),
    /// Submits set `.0` again.
    Replay(usize),
}

/// A frame's recorded sets: see the module docs.
#[derive(Default)]
pub(crate) struct Replays {
    sets: Vec<RecordedSet>,
    /// The keys of the execution being recorded, filled in by the executor.
    pub(crate) now: ReplayKeys,
    /// Whether the passes are a held plan's, which it borrows exclusively: their keys change
    /// only through `&mut self`, so once [`Replays::now`] holds them (`now_asked`) they are
    /// asked again only after the passes recorded, or (`hooks_stale`) the hooked ones after a
    /// replay. Set by whoever lends the frame to an execution.
    keys_held: bool,
    now_asked: bool,
    /// The passes in [`ReplayKeys::hooks`] were lent `&mut self` for [`crate::Pass::replayed`]
    /// since their keys were asked (set before the hooks run): only their keys are asked for
    /// again (the others' cannot have changed).
    hooks_stale: bool,
    /// Moves on each time the passes' keys in `now` are asked for: a set found equal to them
    /// at this count ([`RecordedSet::matched`]) need not compare them again.
    asked: u64,
    /// Where the sets' command buffers go back to, once the frame has kept one.
    pools: Option<Arc<dyn Pools>>,
    /// [`crate::resource::dropped_so_far`] when the sets were last looked at
    /// ([`Replays::forget_dropped`]).
    drops_seen: u64,
    /// Moves on with each submission of a set: which was submitted longest ago.
    clock: u64,
}

impl Replays {
    /// A new plan comes: the old plan's sets go back to the graph's pools
    /// ([`Replays::release`]), their command buffers for the next recordings, and what they
    /// keep alive (the passes' objects, query pools) released once their executions are done.
    pub(crate) fn forget(&mut self) {
        self.release();
        self.now_asked = false;
    }

    /// Which of the passes' keys must be asked for again (see [`Replays::keys_held`]).
    pub(crate) fn keys_to_ask(&self) -> KeysToAsk {
        match (self.keys_held && self.now_asked, self.hooks_stale) {
            (false, _) => KeysToAsk::All,
            (true, true) => KeysToAsk::Hooked,
            (true, false) => KeysToAsk::None,
        }
    }

    /// The passes were lent `&mut self` (they record), or the keys in [`Replays::now`] are
    /// incomplete: every key is asked for again next time.
    pub(crate) fn keys_lent(&mut self) {
        self.now_asked = false;
    }

    /// The passes in [`ReplayKeys::hooks`] are lent `&mut self` for [`crate::Pass::replayed`]:
    /// their keys are asked for again next time.
    pub(crate) fn hooks_lent(&mut self) {
        self.hooks_stale |= !self.now.hooks.is_empty();
    }

    /// The passes' keys in [`Replays::now`] were just asked for.
    pub(crate) fn keys_asked(&mut self) {
        self.now_asked = true;
        self.hooks_stale = false;
        self.asked += 1;
    }

    /// The frame's passes are a held plan's (`true`), or anyone's (a builder's, whose keys
    /// are asked for every execution).
    pub(crate) fn hold_keys(&mut self, held: bool) {
        self.keys_held = held;
        if !held {
            self.now_asked = false;
        }
    }

    /// What to do with the recordings for keys [`Replays::now`]: a matching, idle set is
    /// replayed; otherwise an idle set that can never match again is recorded over, or a new
    /// set while there are fewer than [`SETS`], or else the idle set submitted longest ago.
    pub(crate) fn choose(&mut self) -> Choice {
        let (now, asked) = (&self.now, self.asked);
        for s in self
            .sets
            .iter_mut()
            .filter(|s| s.current && s.matched != asked)
        {
            let same = s.keys.passes == now.passes && s.keys.hooks == now.hooks;
            s.matched = if same { asked } else { 0 };
        }
        let matches = |s: &RecordedSet| {
            let k = &s.keys;
            let others = (k.resources == now.resources && k.bound == now.bound)
                && (k.labels, k.timed) == (now.labels, now.timed)
                && (k.names, k.layouts, k.epoch) == (now.names, now.layouts, now.epoch);
            s.current && s.matched == asked && others
        };
        if let Some(i) = self.sets.iter().position(|s| matches(s) && s.idle()) {
            return Choice::Replay(i);
        }
        if log::log_enabled!(log::Level::Debug) {
            log::debug!("replay: the frame records: {}", self.why_not(matches));
        }
        // A set that differs may be another frame in flight's (keys that alternate, heap
        // sets in turn): it is recorded over only when there is no room for a new one, and
        // then the one submitted longest ago. One that can never match again (not recorded,
        // or from before `invalidate_recordings`) goes first.
        let dead = |s: &RecordedSet| !s.current || s.keys.epoch != self.now.epoch;
        let unrecorded = self.sets.iter().position(|s| dead(s) && s.idle());
        let oldest = (self.sets.iter().enumerate())
            .filter(|(_, s)| s.idle())
            .min_by_key(|(_, s)| s.used)
            .map(|(i, _)| i);
        match unrecorded {
            Some(i) => Choice::Keep(i),
            None if self.sets.len() < SETS => Choice::Keep(self.sets.len()),
            None => oldest.map_or(Choice::Record, Choice::Keep),
        }
    }

    /// Why no kept set can be replayed now (for the log).
    fn why_not(&self, matches: impl Fn(&RecordedSet) -> bool) -> &'static str {
        let now = &self.now;
        let current = || self.sets.iter().filter(|s| s.current);
        // The most recently submitted of those whose passes' keys are the same.
        let same_passes = current()
            .filter(|s| s.matched == self.asked)
            .max_by_key(|s| s.used);
        match same_passes {
            _ if current().next().is_none() => "no recording of this plan yet",
            _ if self.sets.iter().any(matches) => "every matching recording is in flight",
            None => "a pass's replay key differs from every recording's",
            Some(s) if s.keys.resources != now.resources => "another resource is used",
            Some(s) if s.keys.bound != now.bound => {
                "the transients are bound to other objects (another heap set)"
            }
            Some(_) => "labels, GPU timings, the layout policy or the graph's epoch changed",
        }
    }

    /// Opens set `i` (a new one if `i` is the count) to be recorded again: returns its
    /// command buffers, for the executor to give back to their pools before it takes them
    /// again (`pools` is where they come from), and moves what its last recording kept alive
    /// into `keep` (the new execution's, released once it completes).
    pub(crate) fn reopen(
        &mut self,
        i: usize,
        pools: &Arc<dyn Pools>,
        keep: &mut Vec<Kept>,
    ) -> &mut Vec<(PoolKey, vk::CommandBuffer)> {
        self.pools.get_or_insert_with(|| pools.clone());
        if i == self.sets.len() {
            self.sets.push(RecordedSet {
                cmds: Vec::new(),
                keep: Vec::new(),
                ext: KeptExtensions::default(),
                tables: BatchTables::default(),
                keys: ReplayKeys::default(),
                current: false,
                matched: 0,
                token: None,
                used: 0,
                named: Vec::new(),
                #[cfg(debug_assertions)]
                commands: Vec::new(),
            });
        }
        let set = &mut self.sets[i];
        set.current = false;
        keep.append(&mut set.keep);
        &mut set.cmds
    }

    /// Set `i` was recorded for `plan` on `resources` with keys [`Replays::now`] by the
    /// execution of `token`, into `cmds` (taken, left empty) as `tables` say; what its passes
    /// asked to keep alive is `keep[from..]` (taken).
    pub(crate) fn kept(
        &mut self,
        i: usize,
        (cmds, keep, from): (
            &mut Vec<(PoolKey, vk::CommandBuffer)>,
            &mut Vec<Kept>,
            usize,
        ),
        tables: &BatchTables,
        token: &CompletionToken,
        (plan, resources): (&Plan, &[Resource]),
    ) {
        let set = &mut self.sets[i];
        debug_assert!(
            set.cmds.is_empty(),
            "a kept set's command buffers went back first"
        );
        std::mem::swap(&mut set.cmds, cmds);
        set.keep.extend(keep.drain(from..));
        copy_batches(&mut set.tables, tables);
        set.keys.copy_from(&self.now);
        set.current = true;
        set.matched = self.asked;
        set.token = Some(token.clone());
        self.clock += 1;
        set.used = self.clock;
        set.named.clear();
        set.named.extend(resources.iter().map(Resource::downgrade));
        #[cfg(debug_assertions)]
        {
            set.commands = commands_of(plan);
        }
        let _ = plan;
    }

    /// Replays set `i` for the execution of `token`: its tables go into `tables` (whose
    /// fences the caller keeps). Debug builds check that `plan` is the plan it was recorded
    /// for.
    pub(crate) fn replay(
        &mut self,
        i: usize,
        tables: &mut BatchTables,
        token: &CompletionToken,
        plan: &Plan,
    ) {
        let set = &mut self.sets[i];
        #[cfg(debug_assertions)]
        assert!(
            set.commands == commands_of(plan),
            "vk-baton: a replayed recording was made for another plan (a bug in vk-baton)"
        );
        let _ = plan;
        copy_batches(tables, &set.tables);
        set.token = Some(token.clone());
        self.clock += 1;
        set.used = self.clock;
    }
}

/// Copies where `from`'s batches and command buffers are into `to`, keeping its
/// allocations and its fences.
fn copy_batches(to: &mut BatchTables, from: &BatchTables) {
    to.batch_start.clone_from(&from.batch_start);
    to.batch_ends.clone_from(&from.batch_ends);
    to.batch_cmds.clone_from(&from.batch_cmds);
}

impl Replays {
    /// What the optional parts keep for set `i`, to replay it.
    pub(crate) fn ext(&self, i: usize) -> &KeptExtensions {
        &self.sets[i].ext
    }

    /// What the optional parts keep for set `i`, to refill once it is recorded again.
    pub(crate) fn ext_mut(&mut self, i: usize) -> &mut KeptExtensions {
        &mut self.sets[i].ext
    }
}

/// Every command of `plan`, queue by queue and batch by batch.
#[cfg(debug_assertions)]
fn commands_of(plan: &Plan) -> Vec<crate::plan::Command> {
    let batches = plan.queues.iter().flat_map(|q| &q.batches);
    batches.flat_map(|b| b.commands.iter().cloned()).collect()
}

impl Replays {
    /// Gives every set back: its command buffers to the graph's pools and what it keeps alive
    /// to be released, once its last submission is complete (the pools keep them until then).
    fn release(&mut self) {
        let Some(pools) = &self.pools else {
            return;
        };
        for set in self.sets.drain(..) {
            release_set(pools.as_ref(), set);
        }
    }

    /// Gives back the sets that name a resource the app dropped, as [`Replays::release`]
    /// does: their command buffers name a destroyed handle (which Vulkan may give to another
    /// object) and will never be submitted again, and what they keep alive is freed. Looks
    /// only if images or buffers were dropped since it last looked (`dropped`, the count so
    /// far), wherever the frame was meanwhile (in a held plan, a handoff, the plan cache).
    pub(crate) fn forget_dropped(&mut self, dropped: u64) {
        if dropped == self.drops_seen {
            return;
        }
        self.drops_seen = dropped;
        let Some(pools) = &self.pools else {
            return;
        };
        let mut i = 0;
        while i < self.sets.len() {
            if self.sets[i].named.iter().any(WeakResource::dropped) {
                release_set(pools.as_ref(), self.sets.swap_remove(i));
            } else {
                i += 1;
            }
        }
    }
}

/// Gives `set` back to `pools`, which keep it until its last submission is complete.
fn release_set(pools: &dyn Pools, set: RecordedSet) {
    let Some(token) = set.token else {
        return;
    };
    let mut keep = set.keep;
    keep.push(Box::new(set.ext));
    let lists = Lists {
        cmds: set.cmds,
        keep,
        ..Lists::default()
    };
    pools.dropped(InFlight {
        token,
        lists,
        ext: Default::default(),
    });
}

impl Drop for Replays {
    fn drop(&mut self) {
        self.release();
    }
}
