//! Failures are never silent: a handle dropped without waiting, whose task failed, is
//! logged. A minimal tracing subscriber records the warnings.

use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use polycompute::tracing::field::{Field, Visit};
use polycompute::tracing::span::{Attributes, Id, Record};
use polycompute::tracing::{self, Event, Level, Metadata, Subscriber};

use crate::support::{builder, within};
use crate::tasks::{Echo, Fail};
use polycompute::WorkerMode;

/// Every warning or error logged in this process, once [`install`]ed.
fn logged() -> &'static Mutex<Vec<String>> {
    static LOG: OnceLock<Mutex<Vec<String>>> = OnceLock::new();
    LOG.get_or_init(|| Mutex::new(Vec::new()))
}

struct Recorder;

struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }
}

impl Subscriber for Recorder {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        *metadata.level() <= Level::WARN
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut m = Message(String::new());
        event.record(&mut m);
        logged().lock().unwrap().push(m.0);
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

fn install() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| tracing::subscriber::set_global_default(Recorder).expect("the only global subscriber"));
}

fn logged_about(needle: &str) -> bool {
    logged().lock().unwrap().iter().any(|m| m.contains(needle))
}

pub fn dropped_failing_handle_is_logged(mode: WorkerMode) {
    install();
    let pool = builder(mode).build().unwrap();
    // Dropped before it finished: logged when the error arrives.
    drop(pool.submit::<Fail>(4242));
    // Dropped after it finished: logged at the drop.
    let late = pool.submit::<Fail>(4343);
    assert!(within(Duration::from_secs(10), || late.is_finished()).is_some());
    drop(late);
    let found = within(Duration::from_secs(10), || {
        logged_about("deliberate failure 4242") && logged_about("deliberate failure 4343")
    });
    assert!(found.is_some(), "not logged: {:?}", logged().lock().unwrap());
    // A dropped handle of a task that succeeds logs nothing.
    drop(pool.submit::<Echo>(777));
    assert_eq!(pool.submit::<Echo>(1).wait().unwrap(), 1);
    assert!(!logged_about("#2"), "{:?}", logged().lock().unwrap());
}
