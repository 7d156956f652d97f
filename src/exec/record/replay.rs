//! The recording step's part in replay ([`crate::Graph::set_replay`]): which of the frame's
//! kept recordings an execution submits again or records into (`crate::prepared::replays`
//! keeps them and decides), the keys it checks them against, and the replay itself, which
//! records nothing.

use super::{name_the_pass, Kept, Recording};
use crate::completion::CompletionToken;
use crate::error::Result;
use crate::exec::pools::Reusable;
use crate::exec::Execution;
use crate::extensions::Extensions;
use crate::fence::Pools;
use crate::prepared::replays::{Choice, KeysToAsk};
use crate::resource::Resource;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

impl Execution<'_, '_> {
    /// What this execution does with the frame's kept recordings. Only a frame whose every
    /// pass gives a [`crate::pass::ReplayKey`] keeps them, with replay on. Transients are
    /// bound for this execution already: their objects are part of the keys. A recording
    /// spread over threads is kept as any other (its pieces' command buffers, from the
    /// threads' pools, go back there).
    pub(super) fn choose(&mut self, extensions: &Extensions, labels: bool) -> Choice {
        if !self.replay {
            return Choice::Record;
        }
        // Labels and GPU timings both show the passes' names: their hash is part of the keys
        // while either is on, worked out when every key is asked for. A held plan asks for
        // few keys or none, so a switch of either asks for all of them now, not after the
        // next recording (which would record twice, the first time under a stale hash).
        let timed = extensions.timing_mode();
        let named = labels || timed != 0;
        let now = &self.replays.now;
        if named != (now.labels || now.timed != 0) {
            self.replays.keys_lent();
        }
        let asked = match self.replays.keys_to_ask() {
            KeysToAsk::All => self.ask_keys(named),
            KeysToAsk::Hooked => self.ask_hooked_keys(named),
            KeysToAsk::None => true,
        };
        if !asked {
            return Choice::Record;
        }
        let now = &mut self.replays.now;
        now.resources.clear();
        now.resources
            .extend(self.resources.iter().map(Resource::id));
        now.bound.clear();
        if !self.plan.transients.placements.is_empty() {
            now.bound
                .extend(self.resources.iter().map(Resource::bound_object));
        }
        (now.labels, now.layouts) = (labels, self.layouts);
        now.timed = timed;
        now.epoch = self.pools.epoch();
        self.replays.choose()
    }

    /// Asks every pass for its key (`false` if one gives none), and hashes their names when
    /// they are `named` (in labels or GPU timings), into the frame's current keys. A pass the
    /// plan culled is never recorded, so it gets no [`crate::Pass::replayed`] either.
    fn ask_keys(&mut self, named: bool) -> bool {
        let now = &mut self.replays.now;
        now.passes.clear();
        now.hooks.clear();
        let culls = self.plan.order.len() != self.passes.len();
        let recorded = |i: &usize| !culls || self.plan.order.contains(i);
        for (i, entry) in self.passes.iter().enumerate() {
            match entry.pass.replay_key() {
                Some(key) => {
                    if key.calls_replayed() && recorded(&i) {
                        now.hooks.push(i);
                    }
                    now.passes.push(key.get());
                }
                None => {
                    // The keys are cut short: asked for again in full next time.
                    self.replays.keys_lent();
                    return false;
                }
            }
        }
        now.names = match named {
            true => {
                let mut h = crate::fx::FxHasher::default();
                self.passes.iter().for_each(|p| p.name.hash(&mut h));
                h.finish()
            }
            false => 0,
        };
        self.replays.keys_asked();
        true
    }

    /// Asks again only the passes whose [`crate::Pass::replayed`] ran since their keys were
    /// asked (a held plan's other passes had no `&mut self` since); all of them if one of
    /// those no longer asks for the hook or gives no key. `false` if a pass gives no key, as
    /// [`Execution::ask_keys`].
    fn ask_hooked_keys(&mut self, named: bool) -> bool {
        let now = &mut self.replays.now;
        for &i in &now.hooks {
            match self.passes[i].pass.replay_key() {
                Some(key) if key.calls_replayed() => now.passes[i] = key.get(),
                _ => return self.ask_keys(named),
            }
        }
        self.replays.keys_asked();
        true
    }

    /// Gives the command buffers of kept set `set` back to their pools, for this recording
    /// to take them again, in the same order (as [`Reusable::reuse`] does).
    /// What its last recording kept alive goes to this execution's `keep`, released when it
    /// completes.
    pub(super) fn give_back_kept(
        &mut self,
        set: usize,
        reusable: &mut Reusable,
        keep: &mut Vec<Kept>,
    ) {
        let pools: Arc<dyn Pools> = self.pools.clone();
        for (key, cmd) in self.replays.reopen(set, &pools, keep).drain(..).rev() {
            reusable.families.entry(key).or_default().free.push(cmd);
        }
    }

    /// Submits kept set `set` again: a fence per queue with batches, as [`take_objects`](super::take_objects)
    /// takes them, and the set's command buffers. Nothing is recorded; the passes that ask
    /// for it do their bookkeeping ([`crate::Pass::replayed`]) first.
    pub(super) fn replay(
        &mut self,
        set: usize,
        reusable: &mut Reusable,
        token: &CompletionToken,
        out: &mut Recording,
    ) -> Result<()> {
        // Marked before the hooks run, so that it holds even if one of them fails.
        self.replays.hooks_lent();
        for &i in &self.replays.now.hooks {
            let entry = &mut self.passes[i];
            let replayed = entry.pass.replayed(token);
            replayed.map_err(|e| name_the_pass(&entry.name, e))?;
        }
        for (qi, qp) in self.plan.queues.iter().enumerate() {
            if !qp.batches.is_empty() {
                let fence = self.pools.fence(reusable)?;
                out.lists.fences.push(fence);
                out.tables.queue_fences[qi] = Some(fence);
            }
        }
        let kept = self.replays.ext(set);
        out.ext = reusable
            .extensions
            .replay(&self.pools.device, kept, self.plan)?;
        (self.replays).replay(set, &mut out.tables, token, self.plan);
        out.replayed = true;
        Ok(())
    }
}
