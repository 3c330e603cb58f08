//! Faults a fake injects into its HTTP API, the same way for every
//! platform: a chosen share of requests is answered with a rate limit (in
//! the platform's own form, with its retry hint), a `500` or a `502`, a
//! connection closed without an answer, or no answer for a while and then a
//! closed connection.
//!
//! A faulted request never reaches the fake's state: the platform did not
//! act on it, so a client that tries again does the right thing. (A real
//! platform can also act and then lose its answer; no client can tell that
//! from a request that never arrived, and the fakes do not model it.)
//! WebSocket upgrades (gateway, Socket Mode, long connection) are never
//! faulted here: each fake drops those connections with its own control.
//!
//! The draw is seeded ([`Faults::seed`]), so a failing run repeats.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{Request, StatusCode, header::UPGRADE};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};

/// One kind of fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fault {
    /// `429` in the platform's own form, with its retry hint (1 s).
    RateLimited,
    /// `500` with the platform's error body.
    ServerError,
    /// `502` from the front proxy (an HTML page, as proxies send).
    BadGateway,
    /// The connection is closed without an answer.
    Reset,
    /// No answer for [`Faults::hang`], then the connection is closed; with
    /// a `hang` longer than the client's timeout, the client gives up
    /// first.
    NoAnswer,
}

impl Fault {
    /// Every kind.
    pub const ALL: [Fault; 5] = [
        Fault::RateLimited,
        Fault::ServerError,
        Fault::BadGateway,
        Fault::Reset,
        Fault::NoAnswer,
    ];
}

/// Which requests fail, and how.
///
/// ```
/// use askbridge_testkit::faults::{Fault, Faults};
/// let faults = Faults::share(0.2).kinds(&[Fault::ServerError, Fault::Reset]).seed(7);
/// assert_eq!(faults.share, 0.2);
/// assert!(Faults::NONE.kinds.is_empty());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Faults {
    /// The share of requests faulted, from 0 to 1.
    pub share: f64,
    /// The kinds drawn from, each equally likely; none means no faults.
    pub kinds: Vec<Fault>,
    /// How long a [`Fault::NoAnswer`] request is held.
    pub hang: Duration,
    /// Seed of the draw.
    pub seed: u64,
    /// At most this many faults from when these faults were set; `None`:
    /// no end.
    pub at_most: Option<u64>,
}

impl Faults {
    /// No faults: the default.
    pub const NONE: Faults = Faults {
        share: 0.0,
        kinds: Vec::new(),
        hang: Duration::from_secs(120),
        seed: 0,
        at_most: None,
    };

    /// `share` of requests faulted with every kind, held for two minutes
    /// when not answered (longer than any client's timeout).
    pub fn share(share: f64) -> Faults {
        Faults {
            share: share.clamp(0.0, 1.0),
            kinds: Fault::ALL.to_vec(),
            ..Faults::NONE
        }
    }

    /// Only these kinds.
    pub fn kinds(mut self, kinds: &[Fault]) -> Faults {
        self.kinds = kinds.to_vec();
        self
    }

    /// How long an unanswered request is held.
    pub fn hang(mut self, hang: Duration) -> Faults {
        self.hang = hang;
        self
    }

    /// The seed of the draw.
    pub fn seed(mut self, seed: u64) -> Faults {
        self.seed = seed;
        self
    }

    /// At most `count` faults, then none (`Faults::share(1.0).at_most(1)`
    /// fails the next request only).
    pub fn at_most(mut self, count: u64) -> Faults {
        self.at_most = Some(count);
        self
    }
}

impl Default for Faults {
    fn default() -> Faults {
        Faults::NONE
    }
}

/// What a fake has injected so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaultCounts {
    /// Requests that reached the fault layer (upgrades excluded).
    pub requests: u64,
    /// [`Fault::RateLimited`] answers.
    pub rate_limited: u64,
    /// [`Fault::ServerError`] answers.
    pub server_errors: u64,
    /// [`Fault::BadGateway`] answers.
    pub bad_gateways: u64,
    /// [`Fault::Reset`] connections.
    pub resets: u64,
    /// [`Fault::NoAnswer`] requests.
    pub unanswered: u64,
}

impl FaultCounts {
    /// Every faulted request.
    pub fn total(&self) -> u64 {
        self.rate_limited + self.server_errors + self.bad_gateways + self.resets + self.unanswered
    }

    fn count(&mut self, fault: Fault) {
        let counter = match fault {
            Fault::RateLimited => &mut self.rate_limited,
            Fault::ServerError => &mut self.server_errors,
            Fault::BadGateway => &mut self.bad_gateways,
            Fault::Reset => &mut self.resets,
            Fault::NoAnswer => &mut self.unanswered,
        };
        *counter += 1;
    }
}

/// The platform's own answers for the faults that have one.
#[derive(Clone, Copy)]
pub(crate) struct PlatformAnswers {
    /// A `429` with the platform's body and retry hint of 1 s.
    pub(crate) rate_limited: fn() -> Response,
    /// A `500` with the platform's error body.
    pub(crate) server_error: fn() -> Response,
}

/// A fake's faults, changeable while it runs.
pub(crate) struct FaultPlan {
    state: Mutex<Draw>,
    answers: PlatformAnswers,
}

struct Draw {
    faults: Faults,
    rng: fastrand::Rng,
    counts: FaultCounts,
    /// Faults since `faults` were set.
    since_set: u64,
}

impl FaultPlan {
    pub(crate) fn new(faults: Faults, answers: PlatformAnswers) -> Arc<FaultPlan> {
        Arc::new(FaultPlan {
            state: Mutex::new(Draw {
                rng: fastrand::Rng::with_seed(faults.seed),
                faults,
                counts: FaultCounts::default(),
                since_set: 0,
            }),
            answers,
        })
    }

    /// Replaces the faults (and restarts the draw from their seed).
    pub(crate) fn set(&self, faults: Faults) {
        let mut draw = self.lock();
        draw.rng = fastrand::Rng::with_seed(faults.seed);
        draw.faults = faults;
        draw.since_set = 0;
    }

    pub(crate) fn counts(&self) -> FaultCounts {
        self.lock().counts.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Draw> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts a request and draws its fault, if any, with the hang.
    fn draw(&self) -> Option<(Fault, Duration)> {
        let mut draw = self.lock();
        draw.counts.requests += 1;
        let Draw {
            faults,
            rng,
            since_set,
            ..
        } = &mut *draw;
        let spent = faults.at_most.is_some_and(|most| *since_set >= most);
        if spent || faults.kinds.is_empty() || rng.f64() >= faults.share {
            return None;
        }
        let fault = faults.kinds[rng.usize(..faults.kinds.len())];
        let hang = faults.hang;
        *since_set += 1;
        draw.counts.count(fault);
        Some((fault, hang))
    }
}

/// Puts `plan` in front of every route of `router`.
pub(crate) fn layer(router: Router, plan: Arc<FaultPlan>) -> Router {
    router.layer(middleware::from_fn_with_state(plan, inject))
}

async fn inject(
    State(plan): State<Arc<FaultPlan>>,
    request: Request<Body>,
    next: Next,
) -> Response {
    if request.headers().contains_key(UPGRADE) {
        return next.run(request).await;
    }
    let Some((fault, hang)) = plan.draw() else {
        return next.run(request).await;
    };
    tracing::debug!(?fault, path = request.uri().path(), "fake: injected fault");
    match fault {
        Fault::RateLimited => (plan.answers.rate_limited)(),
        Fault::ServerError => (plan.answers.server_error)(),
        Fault::BadGateway => (
            StatusCode::BAD_GATEWAY,
            [("content-type", "text/html")],
            "<html><head><title>502 Bad Gateway</title></head>\
             <body><center><h1>502 Bad Gateway</h1></center></body></html>",
        )
            .into_response(),
        Fault::Reset => close_connection(),
        Fault::NoAnswer => {
            tokio::time::sleep(hang).await;
            close_connection()
        }
    }
}

/// Ends the connection's task without writing an answer: the server drops
/// the socket, and the client sees the connection closed mid-request.
/// `resume_unwind` skips the panic hook, so nothing is printed.
fn close_connection() -> ! {
    std::panic::resume_unwind(Box::new("fake: connection closed without an answer"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answers() -> PlatformAnswers {
        PlatformAnswers {
            rate_limited: || StatusCode::TOO_MANY_REQUESTS.into_response(),
            server_error: || StatusCode::INTERNAL_SERVER_ERROR.into_response(),
        }
    }

    #[test]
    fn the_share_drawn_is_near_the_share_asked_and_repeats_with_the_seed() {
        let plan = FaultPlan::new(Faults::share(0.2).seed(42), answers());
        let first: Vec<_> = (0..10_000).map(|_| plan.draw().map(|(f, _)| f)).collect();
        let counts = plan.counts();
        assert_eq!(counts.requests, 10_000);
        assert!((1_800..2_200).contains(&counts.total()), "{counts:?}");
        for kind in Fault::ALL {
            assert!(first.contains(&Some(kind)), "{kind:?} never drawn");
        }
        plan.set(Faults::share(0.2).seed(42));
        let again: Vec<_> = (0..10_000).map(|_| plan.draw().map(|(f, _)| f)).collect();
        assert_eq!(first, again);
    }

    #[test]
    fn no_kinds_or_no_share_is_no_faults() {
        let plan = FaultPlan::new(Faults::NONE, answers());
        assert!((0..1_000).all(|_| plan.draw().is_none()));
        plan.set(Faults::share(0.0));
        assert!((0..1_000).all(|_| plan.draw().is_none()));
        plan.set(Faults::share(1.0).kinds(&[Fault::Reset]));
        assert!((0..1_000).all(|_| plan.draw().map(|(f, _)| f) == Some(Fault::Reset)));
    }
}
