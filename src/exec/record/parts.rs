//! What a pass records with: [`RecorderParts`], made into the pass's [`Recorder`] for its
//! queue and name; and the execution's own passes as a [`PassSource`].

use crate::access::LayoutPolicy;
use crate::completion::CompletionToken;
use crate::debug::DebugUtils;
use crate::error::{Error, Result};
use crate::extensions::PassSource;
use crate::pass::{Pass, PassEntry, Recorder};
use crate::queue::Queue;
use ash::vk;
use std::any::Any;

/// Everything of a [`Recorder`] but the pass's own queue and name.
pub(crate) struct RecorderParts<'a> {
    pub(super) device: &'a ash::Device,
    pub(super) cmd: vk::CommandBuffer,
    pub(super) keep: &'a mut Vec<Box<dyn Any + Send + Sync>>,
    pub(super) completion: &'a CompletionToken,
    pub(super) debug: Option<&'a DebugUtils>,
    pub(super) layouts: LayoutPolicy,
}

impl RecorderParts<'_> {
    /// Records `pass`, named `name`, on `queue`; a failure names the pass.
    pub(crate) fn record<P: Pass + ?Sized>(
        self,
        pass: &mut P,
        name: &str,
        queue: &Queue,
    ) -> Result<()> {
        let mut r = Recorder {
            device: self.device,
            cmd: self.cmd,
            queue,
            keep: self.keep,
            completion: self.completion,
            debug: self.debug,
            pass_name: name,
            layouts: self.layouts,
        };
        pass.record(&mut r).map_err(|e| name_the_pass(name, e))
    }
}

impl PassSource for &mut [PassEntry<'_>] {
    fn name(&self, p: usize) -> &str {
        &self[p].name
    }

    fn pass(&mut self, p: usize) -> Result<(&mut dyn Pass, &str, &Queue)> {
        let PassEntry { name, pass, queue } = &mut self[p];
        Ok((&mut **pass, name, queue))
    }
}

/// Wraps a pass's error in [`Error::Record`] naming the pass, unless it already does.
fn name_the_pass(pass: &str, e: Error) -> Error {
    match e {
        Error::Record { pass: p, source } if p == pass => Error::Record { pass: p, source },
        e => Error::Record {
            pass: pass.to_owned(),
            source: Box::new(e),
        },
    }
}
