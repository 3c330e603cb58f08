//! A TCP proxy on 127.0.0.1 in front of a server (the test Postgres), for
//! cutting it off: [`Proxy::cut`] closes every connection through it and
//! refuses new ones (as a restarting or unreachable server does, seen from
//! the client), [`Proxy::hang`] keeps every connection open and forwards
//! nothing, new ones included (a link that drops packets: no error, no
//! answer), [`Proxy::restore`] lets connections through again.
//!
//! Use it from an integration test file with `mod proxy;`.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::{AbortHandle, JoinHandle};

#[derive(Default)]
struct Links {
    cut: bool,
    open: Vec<AbortHandle>,
    /// Connections refused while cut.
    refused: usize,
}

/// A running proxy; dropping it stops it and closes its connections.
pub struct Proxy {
    addr: SocketAddr,
    links: Arc<Mutex<Links>>,
    /// Whether links hang ([`Proxy::hang`]); every link watches it.
    hanging: watch::Sender<bool>,
    accept: JoinHandle<()>,
}

impl Proxy {
    /// Listens on `127.0.0.1:0` and forwards every connection to
    /// `upstream`.
    pub async fn start(upstream: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the proxy");
        let addr = listener.local_addr().expect("proxy address");
        let links = Arc::new(Mutex::new(Links::default()));
        let hanging = watch::Sender::new(false);
        let accept = tokio::spawn(accept(
            listener,
            upstream,
            Arc::clone(&links),
            hanging.subscribe(),
        ));
        Proxy {
            addr,
            links,
            hanging,
            accept,
        }
    }

    /// Where clients connect.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Closes every open connection and refuses new ones.
    pub fn cut(&self) {
        let mut links = lock(&self.links);
        links.cut = true;
        for link in links.open.drain(..) {
            link.abort();
        }
    }

    /// Forwards nothing any more, and holds every connection open, new
    /// ones too.
    pub fn hang(&self) {
        self.hanging.send_replace(true);
    }

    /// Lets connections through again; connections that hung are closed
    /// (they timed out, as far as either side can tell).
    pub fn restore(&self) {
        let mut links = lock(&self.links);
        links.cut = false;
        if self.hanging.send_replace(false) {
            for link in links.open.drain(..) {
                link.abort();
            }
        }
    }

    /// Connections refused while cut.
    pub fn refused(&self) -> usize {
        lock(&self.links).refused
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.accept.abort();
        self.cut();
    }
}

fn lock(links: &Mutex<Links>) -> std::sync::MutexGuard<'_, Links> {
    links.lock().unwrap_or_else(PoisonError::into_inner)
}

async fn accept(
    listener: TcpListener,
    upstream: SocketAddr,
    links: Arc<Mutex<Links>>,
    hanging: watch::Receiver<bool>,
) {
    while let Ok((mut client, _)) = listener.accept().await {
        let mut links_now = lock(&links);
        if links_now.cut {
            links_now.refused += 1;
            drop(client);
            continue;
        }
        let mut hanging = hanging.clone();
        let link = tokio::spawn(async move {
            if *hanging.borrow() {
                // Accepted, and never answered.
                return std::future::pending::<()>().await;
            }
            let Ok(mut server) = TcpStream::connect(upstream).await else {
                return;
            };
            let hung = {
                let copy = tokio::io::copy_bidirectional(&mut client, &mut server);
                tokio::select! {
                    _ = copy => false,
                    _ = hanging.wait_for(|hang| *hang) => true,
                }
            };
            if hung {
                // Both sockets stay open; nothing moves between them.
                let _held = (client, server);
                std::future::pending::<()>().await
            }
        });
        links_now.open.retain(|link| !link.is_finished());
        links_now.open.push(link.abort_handle());
    }
}
