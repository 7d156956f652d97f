//! The [`Context`]'s messages: what the layer and the driver reported, and what is allowed.

use super::{AllowedMessage, MessageLog, ValidationMessages};
use crate::Context;

impl Context {
    /// The validation layer's warnings and errors seen so far. The driver's own messages (an
    /// out-of-memory report, say) are not counted here: see [`Context::driver_messages`].
    ///
    /// ```no_run
    /// # fn f(ctx: &vk_baton_context::Context) {
    /// let m = ctx.validation_messages();
    /// assert!(m == 0, "{m}");
    /// # }
    /// ```
    pub fn validation_messages(&self) -> ValidationMessages {
        self.messages.validation.snapshot()
    }

    /// The validation layer's warnings and errors that no allowance covers
    /// ([`Context::allow_message`]): what a test that ran clean has none of.
    ///
    /// ```no_run
    /// # fn f(ctx: &vk_baton_context::Context) {
    /// let m = ctx.unexpected_messages();
    /// assert!(m == 0, "{m}");
    /// # }
    /// ```
    pub fn unexpected_messages(&self) -> ValidationMessages {
        self.message_log().unexpected()
    }

    /// Expects and allows a message from now on (see [`AllowedMessage`]): it still counts in
    /// [`Context::validation_messages`], but not in [`Context::unexpected_messages`], on the
    /// layer versions the allowance names.
    ///
    /// ```no_run
    /// # fn f(ctx: &vk_baton_context::Context) {
    /// // This test copies in GENERAL on purpose (LayoutPolicy::General).
    /// ctx.allow_message(vk_baton_context::messages::COPY_IN_GENERAL_LAYOUT);
    /// # }
    /// ```
    pub fn allow_message(&self, allowed: AllowedMessage) {
        self.message_log().allow(allowed);
    }

    /// The driver's and the loader's warnings and errors seen so far: messages that do not
    /// come from the validation layer.
    ///
    /// ```no_run
    /// # fn f(ctx: &vk_baton_context::Context) {
    /// println!("{}", ctx.driver_messages());
    /// # }
    /// ```
    pub fn driver_messages(&self) -> ValidationMessages {
        self.messages.driver.snapshot()
    }

    /// A handle on this context's messages that outlives it: what destroying the device
    /// reports arrives after the context is gone.
    ///
    /// ```no_run
    /// # fn f(ctx: vk_baton_context::Context) {
    /// let log = ctx.message_log();
    /// drop(ctx);
    /// assert!(log.validation() == 0);
    /// # }
    /// ```
    pub fn message_log(&self) -> MessageLog {
        MessageLog(self.messages.clone())
    }
}
