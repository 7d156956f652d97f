//! [`Graph::hand_off`]: a one-pass frame whose pass the app submits itself, prepared like any
//! frame and lent to the handoff.

use super::{Graph, RecordedBy};
use crate::error::{Error, Result};
use crate::handoff::Handoff;
use crate::pass::{Declare, FnPass, Pass, PassEntry, PassSlot};
use crate::plan::Schedule;
use crate::prepared::PreparedFrame;
use crate::queue::Queue;

impl Graph {
    /// Hands resources to the app's own work on `queue`: `declare` says what the app is about
    /// to do, with the accesses a pass would declare. Plans it (verified in debug builds like
    /// any plan), submits the release-only batches a resource on another queue family needs,
    /// commits the new states, and returns the barriers, waits and signal for the app's own
    /// submit, holding `queue`'s submit lock until then.
    ///
    /// Errors are those of [`GraphBuilder::finish`](crate::GraphBuilder::finish) and
    /// [`Planned::execute`](crate::Planned::execute) (a release submit that failed); nothing
    /// is committed then.
    ///
    /// See the [module docs](crate::handoff).
    pub fn hand_off<'q, D>(&self, name: &str, queue: &'q Queue, declare: D) -> Result<Handoff<'q>>
    where
        D: Fn(&mut Declare<'_>) + 'q,
    {
        let device = self.device.handle();
        if queue.device_handle() != device {
            return Err(Error::ForeignDevice {
                what: format!("queue `{}` (handoff `{name}`)", queue.name()),
            });
        }
        // The app's pass records nothing here; the app records its commands itself.
        let pass: Box<dyn Pass + 'q> = Box::new(FnPass::new(declare, |_| Ok(())));
        let passes = vec![PassEntry {
            name: name.to_owned().into(),
            pass: PassSlot::Owned(pass),
            queue,
        }];
        let (frame, tier) =
            self.prepare(&passes, Schedule::PROGRAM_ORDER, RecordedBy::App, None)?;
        let app = frame.plan.app_batch()?.queue;
        // The barrier structs were built for parts of the plan: the next user rebuilds them.
        let kept = self.kept.clone();
        let keep: Box<dyn FnOnce(PreparedFrame) + 'q> = Box::new(move |mut frame| {
            frame.forget();
            kept.lock().cache.put_back(Box::new(frame));
        });
        let lent = (self.pools.clone(), passes, *frame);
        let device = (self.device.clone(), self.debug.clone());
        Handoff::begin(
            (name, queue, app),
            lent,
            device,
            (Some(keep), tier.is_some()),
        )
    }
}
