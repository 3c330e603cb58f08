//! The HTTPS side of the fake: a throw-away certificate authority and a
//! `discord.com` certificate it signs, made when first needed, so a client
//! that sends its requests to `https://discord.com` through the fake as an
//! HTTP proxy (`CONNECT discord.com:443`) reaches the fake instead.
//!
//! This exists for serenity's rate limiter: serenity 0.12 builds rate-limited
//! requests without `HttpBuilder::proxy` (it passes `None` for the proxy), so
//! the only way for its rate limiter to talk to a local fake is a
//! `reqwest::Client` that tunnels `discord.com` to it and trusts its
//! certificate ([`FakeDiscord::https_client`](super::FakeDiscord::https_client)).

use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair, KeyUsagePurpose};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::crypto::ring;
use tokio_rustls::rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};

/// The hosts the certificate is valid for and the tunnel accepts.
pub(crate) const HOSTS: &[&str] = &["discord.com", "gateway.discord.gg"];

/// The CA's certificate (for clients to trust) and the server side.
#[derive(Clone)]
pub(crate) struct Tls {
    pub(crate) ca_pem: String,
    pub(crate) acceptor: TlsAcceptor,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tls").finish_non_exhaustive()
    }
}

/// Makes a CA, a certificate for [`HOSTS`] signed by it, and a TLS server
/// configuration (HTTP/1.1 only) with that certificate.
pub(crate) fn generate() -> Result<Tls, String> {
    let ca_key = KeyPair::generate().map_err(|error| error.to_string())?;
    let mut ca_params =
        CertificateParams::new(Vec::<String>::new()).map_err(|error| error.to_string())?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "askbridge fake Discord CA");
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca = ca_params
        .self_signed(&ca_key)
        .map_err(|error| error.to_string())?;

    let leaf_key = KeyPair::generate().map_err(|error| error.to_string())?;
    let names: Vec<String> = HOSTS.iter().map(|host| (*host).to_owned()).collect();
    let mut leaf_params = CertificateParams::new(names).map_err(|error| error.to_string())?;
    leaf_params
        .distinguished_name
        .push(DnType::CommonName, "discord.com");
    let leaf = leaf_params
        .signed_by(&leaf_key, &ca, &ca_key)
        .map_err(|error| error.to_string())?;

    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der()));
    let mut config = ServerConfig::builder_with_provider(Arc::new(ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|error| error.to_string())?
        .with_no_client_auth()
        .with_single_cert(vec![leaf.der().clone()], key)
        .map_err(|error| error.to_string())?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Tls {
        ca_pem: ca.pem(),
        acceptor: TlsAcceptor::from(Arc::new(config)),
    })
}
