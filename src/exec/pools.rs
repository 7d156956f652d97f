//! What executions reuse and hand back: [`Reusable`], a command pool per queue family and
//! recording thread with its spare command buffers, spare fences, the optional features'
//! objects and the emptied lists of the last executions ([`Spares`]); and [`InFlight`], what
//! one execution keeps alive until its fences signal, and then hands back.
//!
//! [`Reusable`] is held locked while recording (command pools need external
//! synchronization): the one lock an execution takes. A fence that sees its execution
//! complete hands it back without a lock, through a channel that the next execution drains
//! under that lock (`GraphPools::give_back`).

use crate::completion::CompletionToken;
use crate::extensions::Extensions;
use crate::fence::{InFlight, Lists, PoolKey};
use crate::spare::KEPT;
use ash::vk;
use std::collections::HashMap;
use std::sync::mpsc::Receiver;

/// Reusable objects of one queue family.
#[derive(Default)]
pub(super) struct FamilyPool {
    pub(super) pool: vk::CommandPool,
    pub(super) free: Vec<vk::CommandBuffer>,
}

/// Command pools per family and recording thread, spare fences and lists, and the
/// executions handed back since the last one. Held locked while recording (command pools
/// need external synchronization).
pub(crate) struct Reusable {
    /// Keyed by (family, thread): Fx-hashed, looked up twice per execution.
    pub(super) families: HashMap<PoolKey, FamilyPool, crate::fx::FxBuildHasher>,
    /// Unsignalled, ready to submit with.
    pub(super) fences: Vec<vk::Fence>,
    /// Per command buffer, the (queue, batch) its debug name says.
    pub(super) names: HashMap<vk::CommandBuffer, (vk::Queue, usize), crate::fx::FxBuildHasher>,
    /// The graph's part of the optional features (timestamp query pools, recording threads).
    pub(super) extensions: Extensions,
    /// Emptied vectors, scratch space and spent tokens for the next execution.
    pub(super) spares: Spares,
    /// Executions their fences saw complete, to recycle (`GraphPools::give_back`).
    pub(super) returned: Receiver<InFlight>,
}

impl Reusable {
    /// Takes back what a completed (or never submitted) execution used, emptied by
    /// [`InFlight::release`]: its fences reset, its command buffers back in their pools, its
    /// lists, token and scratch kept.
    pub(super) fn reuse(&mut self, c: InFlight) {
        let InFlight {
            token,
            mut lists,
            ext: _,
        } = c;
        let Lists { fences, cmds, .. } = &mut lists;
        // Reset when it was released (`InFlight::release`).
        self.fences.append(fences);
        // In reverse, so that the next execution takes them in this one's order: a command
        // buffer keeps its batch (and debug name) from frame to frame.
        for (key, cmd) in cmds.drain(..).rev() {
            self.families.entry(key).or_default().free.push(cmd);
        }
        lists.clear();
        if self.spares.lists.len() < KEPT {
            self.spares.lists.push(lists);
        }
        self.spares.give_token(token);
    }

    /// Reuses every execution handed back through the channel since the last call.
    pub(super) fn take_returned(&mut self) {
        while let Ok(c) = self.returned.try_recv() {
            self.reuse(c);
        }
    }

    /// Nothing to reuse yet; completed executions arrive through `returned`.
    pub(super) fn new(returned: Receiver<InFlight>) -> Self {
        Reusable {
            families: HashMap::default(),
            fences: Vec::new(),
            names: HashMap::default(),
            extensions: Extensions::default(),
            spares: Spares::default(),
            returned,
        }
    }
}

/// What the executions of one graph hand back for the next one, kept with the command pools
/// (`Reusable`): an execution takes what it needs under the one lock it takes to record, and
/// gets back what the executions before it handed back ([`Reusable::take_returned`]).
#[derive(Default)]
pub(crate) struct Spares {
    /// The emptied lists of finished executions (at most [`KEPT`]: a burst of executions in
    /// flight does not keep memory for good).
    pub(super) lists: Vec<Lists>,
    /// Tokens of finished executions; one nobody else holds any more is reused.
    pub(super) tokens: Vec<CompletionToken>,
}

impl Spares {
    /// A token for a new execution: a spent one that only this list still holds, reset, or a
    /// new one.
    pub(super) fn token(&mut self, device: &std::sync::Arc<ash::Device>) -> CompletionToken {
        if let Some(i) = self
            .tokens
            .iter_mut()
            .position(CompletionToken::reset_if_unique)
        {
            return self.tokens.swap_remove(i);
        }
        CompletionToken::new(device.clone())
    }

    /// Keeps a spent token for [`Spares::token`], once: a kept recording hands back the token
    /// of its last execution, which that execution handed back too.
    pub(super) fn give_token(&mut self, token: CompletionToken) {
        if self.tokens.len() < KEPT && !self.tokens.iter().any(|t| t.same(&token)) {
            self.tokens.push(token);
        }
    }
}
