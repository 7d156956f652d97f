//! [`Graph::hand_off`]: a plan of one pass that the app records and submits itself; see
//! [`crate::handoff`].

use super::{FromCache, Graph};
use crate::error::{Error, Result};
use crate::handoff::Handoff;
use crate::pass::{Declare, FnPass, Pass, PassEntry, PassSlot};
use crate::plan::Schedule;
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
        let device = self.pools().device.handle();
        if queue.device_handle() != device {
            return Err(Error::ForeignDevice {
                what: format!("queue `{}` (handoff `{name}`)", queue.name()),
            });
        }
        // The app's pass records nothing here; the app records its commands itself.
        let pass: Box<dyn Pass + 'q> = Box::new(FnPass::new(declare, |_| Ok(())));
        let passes = vec![PassEntry {
            name: name.to_owned(),
            pass: PassSlot::Owned(pass),
            queue: queue.clone(),
        }];
        let prepared = self.prepare(&passes, Schedule::PROGRAM_ORDER, FromCache::No)?;
        let app = prepared.plan.app_batch()?.queue;
        let execution = prepared.into_execution(self.pools(), passes);
        Handoff::begin(name, queue, app, execution)
    }
}
