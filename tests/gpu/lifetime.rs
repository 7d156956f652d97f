//! Lifetimes: fence waits with and without completion, what an incomplete execution keeps
//! alive, an execution that failed before its submit, and a graph that outlives its context.

use super::*;

/// A fence's timed wait reports an incomplete execution as such, then completion. The work is
/// held back by a gate the test opens itself, so "incomplete" is certain, not a race.
#[test]
fn fence_wait_timeout_and_completion() {
    let ctx = ctx();
    let kit = Compute::new(
        &ctx,
        vk_baton_shaders::FILL_COMP,
        vk::DescriptorType::STORAGE_BUFFER,
    );
    let count = 1 << 16;
    let buf = ctx
        .buffer(
            BufferDesc::new(count * 4, vk::BufferUsageFlags::STORAGE_BUFFER),
            "buf",
        )
        .unwrap();
    let set = kit.buffer_set(&buf);
    let graph = ctx.graph().unwrap();
    let gate = Gate::new(&ctx, ctx.async_compute());
    gate.hold();
    let mut fill = Fill {
        kit: &kit,
        buf: buf.clone(),
        set,
        seed: 1,
        repeat: 8,
    };
    let fence = graph
        .record()
        .insert_pass("fill", &mut fill, ctx.async_compute())
        .finish()
        .unwrap()
        .execute()
        .unwrap();
    let token = fence.completion();
    assert!(
        !fence.wait_timeout(Duration::from_millis(20)).unwrap(),
        "the gate is closed: the wait must time out"
    );
    assert!(!fence.is_complete());
    assert!(!token.is_complete());
    assert!(!token.has_failed());
    assert!(matches!(token.check(), Err(Error::NotReady)));

    gate.open();
    assert!(fence.wait_timeout(Duration::from_secs(60)).unwrap());
    assert!(fence.is_complete());
    assert!(token.is_complete());
    fence.wait().unwrap();
    token.check().unwrap();

    // An empty graph completes at once.
    let empty = graph.record().finish().unwrap().execute().unwrap();
    assert!(empty.is_complete());
    drop(fill);
    drop(gate);
    assert_clean(&ctx);
}

/// Dropping the fence of an execution that is provably still held back (by a gate the test
/// opens only afterwards) keeps its resources alive; they go once it completes. Dropping the
/// graph then waits for such an execution instead of freeing under it.
#[test]
fn dropping_an_incomplete_fence_frees_nothing_early() {
    let ctx = ctx();
    let kit = Compute::new(
        &ctx,
        vk_baton_shaders::FILL_COMP,
        vk::DescriptorType::STORAGE_BUFFER,
    );
    let count = 1 << 12;
    let graph = ctx.graph().unwrap();
    let gate = Gate::new(&ctx, ctx.async_compute());
    let token;
    let weak;
    {
        let buf = ctx
            .buffer(
                BufferDesc::new(count * 4, vk::BufferUsageFlags::STORAGE_BUFFER),
                "short-lived",
            )
            .unwrap();
        weak = Arc::downgrade(&buf);
        let set = kit.buffer_set(&buf);
        gate.hold();
        let mut fill = Fill {
            kit: &kit,
            buf,
            set,
            seed: 2,
            repeat: 1,
        };
        let fence = graph
            .record()
            .insert_pass("fill", &mut fill, ctx.async_compute())
            .finish()
            .unwrap()
            .execute()
            .unwrap();
        token = fence.completion();
        // The pass (and its Arc) and the fence drop here, while the gate holds the work back.
    }
    assert!(!token.is_complete(), "the gate is still closed");
    let _ = graph.record(); // collects completed executions: this one is not
    assert!(
        weak.upgrade().is_some(),
        "the buffer was freed while the GPU may still use it"
    );

    gate.open();
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while !token.is_complete() {
        assert!(!token.has_failed());
        assert!(
            std::time::Instant::now() < deadline,
            "execution never completed"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = graph.record();
    assert!(weak.upgrade().is_none(), "released once complete");

    // Dropping the graph with an incomplete dropped fence waits instead of freeing early: the
    // gate opens from another thread only after the drop has begun waiting.
    gate.close();
    let buf = ctx
        .buffer(
            BufferDesc::new(count * 4, vk::BufferUsageFlags::STORAGE_BUFFER),
            "dropped with graph",
        )
        .unwrap();
    let weak = Arc::downgrade(&buf);
    let set = kit.buffer_set(&buf);
    gate.hold();
    let mut fill = Fill {
        kit: &kit,
        buf,
        set,
        seed: 3,
        repeat: 1,
    };
    let fence = graph
        .record()
        .insert_pass("fill", &mut fill, ctx.async_compute())
        .finish()
        .unwrap()
        .execute()
        .unwrap();
    let token = fence.completion();
    drop(fence);
    drop(fill);
    assert!(!token.is_complete());
    assert!(weak.upgrade().is_some());
    // The gate opens from the host on another thread while this one waits in the graph's
    // drop: old layers can time out on their own lock there (a layer fault, see the allowance).
    ctx.allow_message(vk_baton_context::messages::HOST_SIGNAL_DURING_FENCE_WAIT);
    let opened = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(200));
            opened.store(true, std::sync::atomic::Ordering::SeqCst);
            gate.open();
        });
        drop(graph);
        assert!(
            opened.load(std::sync::atomic::Ordering::SeqCst),
            "dropping the graph returned before the held-back execution could run"
        );
    });
    assert!(token.is_complete());
    assert!(weak.upgrade().is_none());
    drop(gate);
    assert_clean(&ctx);
}

#[test]
fn keep_alive_objects_live_until_completion() {
    struct Keeper(Arc<StBuffer>, Arc<()>);
    impl Pass for Keeper {
        fn declare(&self, d: &mut Declare<'_>) {
            d.uses(&self.0, Access::TRANSFER_WRITE).discard();
        }
        fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
            // SAFETY: the buffer is in the declared state.
            unsafe {
                r.device()
                    .cmd_fill_buffer(r.cmd(), self.0.handle(), 0, vk::WHOLE_SIZE, 0xABCD_1234)
            };
            r.keep_alive(self.1.clone());
            Ok(())
        }
    }
    let ctx = ctx();
    let buf = ctx
        .buffer(
            BufferDesc::readback(1024, vk::BufferUsageFlags::TRANSFER_DST),
            "filled",
        )
        .unwrap();
    let marker = Arc::new(());
    let graph = ctx.graph().unwrap();
    let mut k = Keeper(buf.clone(), marker.clone());
    let mut host = HostRead(buf.clone());
    let fence = graph
        .record()
        .insert_pass("fill", &mut k, ctx.transfer())
        .insert_pass("host", &mut host, ctx.transfer())
        .finish()
        .unwrap()
        .execute()
        .unwrap();
    assert_eq!(
        Arc::strong_count(&marker),
        3,
        "the fence holds the kept object"
    );
    fence.wait().unwrap();
    assert_eq!(Arc::strong_count(&marker), 2, "released after the wait");
    let mut out = [0u8; 8];
    buf.read(1016, &mut out).unwrap();
    assert_eq!(out, [0x34, 0x12, 0xCD, 0xAB, 0x34, 0x12, 0xCD, 0xAB]);
    assert_clean(&ctx);
}

/// Remembers the completion token it is handed, then optionally fails to record.
struct TokenProbe {
    buf: Arc<StBuffer>,
    token: Option<vk_baton::CompletionToken>,
    fail: bool,
}

impl Pass for TokenProbe {
    fn declare(&self, d: &mut Declare<'_>) {
        d.uses(&self.buf, Access::TRANSFER_WRITE).discard();
    }
    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        self.token = Some(r.completion());
        if self.fail {
            return Err(Error::PassFailed("planted failure".into()));
        }
        // SAFETY: the buffer is alive; the graph ordered this pass.
        unsafe {
            r.device()
                .cmd_fill_buffer(r.cmd(), self.buf.handle(), 0, vk::WHOLE_SIZE, 9)
        };
        Ok(())
    }
}

/// An execution that never reached the GPU must not look complete to the objects it handed a
/// token to (a download handle would otherwise return stale bytes).
#[test]
fn an_execution_that_failed_before_submit_never_looks_complete() {
    let ctx = ctx();
    let graph = ctx.graph().unwrap();
    let buf = ctx
        .buffer(
            BufferDesc::new(256, vk::BufferUsageFlags::TRANSFER_DST),
            "buf",
        )
        .unwrap();

    // A pass that fails while recording.
    let mut failing = TokenProbe {
        buf: buf.clone(),
        token: None,
        fail: true,
    };
    let e = graph
        .record()
        .insert_pass("fails", &mut failing, ctx.graphics())
        .finish()
        .unwrap()
        .execute()
        .unwrap_err();
    assert!(
        matches!(&e, Error::Record { pass, source } if pass == "fails" && matches!(**source, Error::PassFailed(_))),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "pass `fails` failed to record: planted failure"
    );
    let token = failing.token.take().expect("record ran");
    assert!(!token.is_complete());
    assert!(token.has_failed());
    assert!(matches!(token.check(), Err(Error::NotExecuted)));

    // A stale plan: recorded, then refused before submitting.
    let mut stale = TokenProbe {
        buf: buf.clone(),
        token: None,
        fail: false,
    };
    let mut other = TokenProbe {
        buf: buf.clone(),
        token: None,
        fail: false,
    };
    let planned = graph
        .record()
        .insert_pass("stale", &mut stale, ctx.graphics())
        .finish()
        .unwrap();
    let fence = graph
        .record()
        .insert_pass("other", &mut other, ctx.graphics())
        .finish()
        .unwrap()
        .execute()
        .unwrap();
    assert!(matches!(planned.execute(), Err(Error::StalePlan { .. })));
    fence.wait().unwrap();
    let token = stale.token.take().expect("record ran");
    assert!(matches!(token.check(), Err(Error::NotExecuted)));
    // The execution that did run completes normally.
    assert!(other.token.take().unwrap().is_complete());
    assert_clean(&ctx);
}

/// A graph that outlives its context keeps the device alive (leaked, with an error logged)
/// instead of destroying its pools and fences on a destroyed device: it still executes after
/// the context is gone, and dropping it then reports nothing.
#[test]
fn a_graph_may_outlive_its_context() {
    let ctx = ctx();
    let log = ctx.message_log();
    let graph = ctx.graph().unwrap();
    let queue = ctx.graphics().clone();
    let buf = ctx
        .buffer(
            BufferDesc::new(256, vk::BufferUsageFlags::TRANSFER_DST),
            "buf",
        )
        .unwrap();
    let mut fill = TokenProbe {
        buf: buf.clone(),
        token: None,
        fail: false,
    };
    graph
        .record()
        .insert_pass("fill", &mut fill, &queue)
        .finish()
        .unwrap()
        .execute()
        .unwrap()
        .wait()
        .unwrap();
    assert_clean(&ctx);
    drop(ctx);

    // The device lives on for the graph, its queue and its buffer.
    let fence = graph
        .record()
        .insert_pass("fill again", &mut fill, &queue)
        .finish()
        .unwrap()
        .execute()
        .unwrap();
    fence.wait().unwrap();
    let token = fill.token.take().expect("record ran");
    token.check().unwrap();
    drop(fence);
    drop(fill);
    drop(buf);
    drop(queue);
    drop(graph); // destroys its fences and pools on the still-alive device
    assert!(log.validation() == 0, "{}", log.validation());
    assert!(log.driver() == 0, "{}", log.driver());
}

/// `Queue::host_complete` moves only when the host sees a fence signal: not while the work is
/// held back, then to the execution's value once `wait` returns, and for a dropped fence once
/// the graph collects it (at the next `execute()`).
#[test]
fn host_complete_follows_the_fences_the_host_saw() {
    let ctx = ctx();
    let kit = Compute::new(
        &ctx,
        vk_baton_shaders::FILL_COMP,
        vk::DescriptorType::STORAGE_BUFFER,
    );
    let buf = ctx
        .buffer(
            BufferDesc::new(4096, vk::BufferUsageFlags::STORAGE_BUFFER),
            "buf",
        )
        .unwrap();
    let set = kit.buffer_set(&buf);
    let graph = ctx.graph().unwrap();
    let q = ctx.async_compute();
    let gate = Gate::new(&ctx, q);
    let mut fill = Fill {
        kit: &kit,
        buf: buf.clone(),
        set,
        seed: 1,
        repeat: 1,
    };
    let run = |fill: &mut Fill<'_>| {
        let fence = graph
            .record()
            .insert_pass("fill", fill, q)
            .finish()
            .unwrap()
            .execute()
            .unwrap();
        (fence, q.last_value())
    };
    gate.hold();
    let before = q.host_complete();
    let (fence, value) = run(&mut fill);
    assert!(value > before);
    assert!(!fence.is_complete(), "the gate is closed");
    assert_eq!(q.host_complete(), before, "nothing was seen complete");
    gate.open();
    fence.wait().unwrap();
    assert_eq!(q.host_complete(), value);

    // A dropped fence: seen when the graph collects it, at the next execution. (An opened
    // gate holds nothing back until it is closed again.)
    gate.close();
    gate.hold();
    let (dropped, value) = run(&mut fill);
    let token = dropped.completion();
    drop(dropped);
    assert!(q.host_complete() < value, "the gate is closed");
    gate.open();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !token.is_complete() {
        assert!(
            std::time::Instant::now() < deadline,
            "the fill never finished"
        );
        std::thread::yield_now();
    }
    let (last, _) = run(&mut fill);
    assert!(
        q.host_complete() >= value,
        "collected at the next execution"
    );
    last.wait().unwrap();
    drop(fill);
    assert_clean(&ctx);
}
