//! Where a `callbackUrl` may point: hosts `[webhooks] allowed_hosts`
//! lists, at addresses that are public unless the host is listed by
//! name, over `https` unless the host is a listed loopback one.
//!
//! The rule is applied to the URL when an ask is created (after resolving
//! its host), and again to every address a delivery connects to: the
//! daemon's HTTP client resolves names through [`Policy`] itself, so a name
//! that resolves elsewhere by the time of the delivery (DNS rebinding), or
//! a redirect to another host, meets the same rule.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use reqwest::Url;

/// The hosts a `callbackUrl` may name.
#[derive(Debug, Clone)]
pub struct Policy {
    /// `allowed_hosts`, lower case: names, `*.name`, IP addresses, `*`.
    allowed: Vec<String>,
}

/// How a host is allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Listed {
    /// By its own name or address: any address it resolves to is fine
    /// (the operator named it).
    Exactly,
    /// By a wildcard (`*.example.com`, `*`): public addresses only.
    ByWildcard,
}

impl Policy {
    /// A policy for `allowed_hosts` as configured.
    pub fn new(allowed: &[String]) -> Policy {
        Policy {
            allowed: allowed.to_vec(),
        }
    }

    /// How `host` (lower case, no brackets) is listed, if it is.
    fn listed(&self, host: &str) -> Option<Listed> {
        let host = host.trim_end_matches('.');
        let mut found = None;
        for entry in &self.allowed {
            if entry == host {
                return Some(Listed::Exactly);
            }
            let wildcard = entry == "*"
                || entry.strip_prefix("*.").is_some_and(|suffix| {
                    host.strip_suffix(suffix)
                        .is_some_and(|rest| rest.ends_with('.'))
                });
            if wildcard && host.parse::<IpAddr>().is_err() {
                found = Some(Listed::ByWildcard);
            }
        }
        found
    }

    /// Checks `url` (already parsed) as far as it can without resolving
    /// its host: a listed host, `https` unless it is a listed loopback one
    /// (an address, or `localhost`). Returns the host, its port and how it
    /// is listed.
    fn check_url<'u>(&self, url: &'u Url) -> Result<(&'u str, u16, Listed), String> {
        let host = url
            .host_str()
            .map(|host| host.trim_start_matches('[').trim_end_matches(']'))
            .filter(|host| !host.is_empty())
            .ok_or("has no host")?;
        let port = url
            .port_or_known_default()
            .ok_or_else(|| format!("unsupported scheme {:?}", url.scheme()))?;
        let Some(listed) = self.listed(host) else {
            return Err(if self.allowed.is_empty() {
                format!("host {host:?} is not allowed: [webhooks] allowed_hosts lists no host")
            } else {
                format!(
                    "host {host:?} is not allowed: [webhooks] allowed_hosts lists {}",
                    self.allowed.join(", ")
                )
            });
        };
        match url.scheme() {
            "https" => {}
            "http" if listed == Listed::Exactly && is_loopback_name(host) => {}
            "http" => {
                return Err(format!(
                    "must be https:// (http:// only for a loopback host listed in \
                     [webhooks] allowed_hosts), got http://{host}"
                ));
            }
            other => return Err(format!("unsupported scheme {other:?}; expected https")),
        }
        if let Ok(address) = host.parse::<IpAddr>() {
            self.check_address(host, listed, address)?;
        }
        Ok((host, port, listed))
    }

    /// Whether `address`, which `host` resolved to, may be called.
    fn check_address(&self, host: &str, listed: Listed, address: IpAddr) -> Result<(), String> {
        match (listed, not_public(address)) {
            (_, None) | (Listed::Exactly, Some(_)) => Ok(()),
            (Listed::ByWildcard, Some(kind)) => Err(format!(
                "host {host:?} resolves to {address}, a {kind} address: list the host itself in \
                 [webhooks] allowed_hosts to allow it"
            )),
        }
    }

    /// The full check of a `callbackUrl` when an ask is created: the
    /// URL's rules, then every address its host resolves to now.
    pub async fn check(&self, url: &str) -> Result<(), String> {
        let parsed = Url::parse(url).map_err(|error| format!("not a URL: {error}"))?;
        let (host, port, listed) = self.check_url(&parsed)?;
        if host.parse::<IpAddr>().is_ok() {
            return Ok(());
        }
        let addresses = self.resolve(host, port, listed).await?;
        if addresses.is_empty() {
            return Err(format!("host {host:?} has no address"));
        }
        Ok(())
    }

    /// Checks a URL a delivery is about to call (the callback, or where a
    /// redirect points): the URL's rules; the addresses are checked as the
    /// client resolves them ([`Resolver`]).
    pub fn check_before_call(&self, url: &Url) -> Result<(), String> {
        self.check_url(url).map(|_| ())
    }

    /// `host`'s addresses, if each may be called; the first refused one
    /// refuses them all.
    async fn resolve(
        &self,
        host: &str,
        port: u16,
        listed: Listed,
    ) -> Result<Vec<SocketAddr>, String> {
        let addresses: Vec<SocketAddr> = tokio::net::lookup_host((host, port))
            .await
            .map_err(|error| format!("cannot resolve {host:?}: {error}"))?
            .collect();
        for address in &addresses {
            self.check_address(host, listed, address.ip())?;
        }
        Ok(addresses)
    }
}

/// Whether `host` is a loopback address or `localhost`.
fn is_loopback_name(host: &str) -> bool {
    host == "localhost"
        || host.ends_with(".localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// What kind of address `address` is when it is not public: loopback,
/// private, link-local (cloud metadata among them), … `None` for a
/// public one.
fn not_public(address: IpAddr) -> Option<&'static str> {
    match address {
        IpAddr::V4(v4) => not_public_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => not_public_v4(v4),
            None => not_public_v6(v6),
        },
    }
}

fn not_public_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    Some(if ip.is_loopback() {
        "loopback"
    } else if ip.is_private() {
        "private"
    } else if ip.is_link_local() {
        // 169.254.169.254 is the cloud metadata service.
        "link-local"
    } else if ip.is_unspecified() || a == 0 {
        "unspecified"
    } else if a == 100 && (64..128).contains(&b) {
        "shared (carrier-grade NAT)"
    } else if ip.is_multicast() || ip.is_broadcast() || a >= 240 {
        "multicast or reserved"
    } else if ip.is_documentation() || (a == 198 && (b == 18 || b == 19)) {
        "documentation or benchmarking"
    } else if a == 192 && b == 0 && c == 0 {
        "IETF protocol"
    } else {
        return None;
    })
}

fn not_public_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let first = ip.segments()[0];
    Some(if ip.is_loopback() {
        "loopback"
    } else if ip.is_unspecified() {
        "unspecified"
    } else if first & 0xfe00 == 0xfc00 {
        "private (unique local)"
    } else if first & 0xffc0 == 0xfe80 {
        "link-local"
    } else if ip.is_multicast() {
        "multicast"
    } else if first == 0x2001 && ip.segments()[1] == 0x0db8 {
        "documentation"
    } else if first == 0x0064 && ip.segments()[1] == 0xff9b {
        // NAT64: whatever IPv4 address it carries.
        return not_public_v4(Ipv4Addr::from(
            u32::from(ip.segments()[6]) << 16 | u32::from(ip.segments()[7]),
        ));
    } else {
        return None;
    })
}

/// The daemon's HTTP client's name resolution for deliveries: a name's
/// addresses, each checked by the [`Policy`] (so nothing is called at an
/// address the policy refuses, whatever the name resolves to by then).
#[derive(Debug, Clone)]
pub struct Resolver(pub std::sync::Arc<Policy>);

impl reqwest::dns::Resolve for Resolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let policy = std::sync::Arc::clone(&self.0);
        Box::pin(async move {
            let host = name.as_str().to_ascii_lowercase();
            let result = match policy.listed(&host) {
                None => Err(format!("host {host:?} is not allowed")),
                // The port is the URL's: reqwest sets it on each address.
                Some(listed) => policy.resolve(&host, 0, listed).await,
            };
            result
                .map(|addresses| Box::new(addresses.into_iter()) as reqwest::dns::Addrs)
                .map_err(Box::<dyn std::error::Error + Send + Sync>::from)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(hosts: &[&str]) -> Policy {
        Policy::new(&hosts.iter().map(|h| (*h).to_owned()).collect::<Vec<_>>())
    }

    fn check(policy: &Policy, url: &str) -> Result<(), String> {
        policy.check_before_call(&Url::parse(url).expect("url"))
    }

    #[test]
    fn webhook_hosts_must_be_listed_exactly_or_by_a_wildcard() {
        let hosts = policy(&[
            "hooks.example.com",
            "*.example.org",
            "127.0.0.1",
            "localhost",
        ]);
        for allowed in [
            "https://hooks.example.com/askbridge",
            "https://HOOKS.example.com./x",
            "https://a.example.org/x",
            "https://a.b.example.org:8443/x",
            "http://127.0.0.1:9000/hook",
            "http://localhost:9000/hook",
        ] {
            assert_eq!(check(&hosts, allowed), Ok(()), "{allowed}");
        }
        for (refused, why) in [
            ("https://evil.example.com/x", "is not allowed"),
            ("https://example.org/x", "is not allowed"),
            ("https://aexample.org/x", "is not allowed"),
            ("http://hooks.example.com/x", "must be https://"),
            ("http://a.example.org/x", "must be https://"),
            ("ftp://hooks.example.com/x", "unsupported scheme"),
            ("https://127.0.0.2/x", "is not allowed"),
        ] {
            let error = check(&hosts, refused).expect_err(refused);
            assert!(error.contains(why), "{refused}: {error}");
        }
        let none = policy(&[]);
        let error = check(&none, "https://hooks.example.com/").expect_err("nothing listed");
        assert!(error.contains("lists no host"), "{error}");
    }

    #[test]
    fn webhook_addresses_that_are_not_public_need_the_host_listed_itself() {
        let any = policy(&["*"]);
        for (url, kind) in [
            ("https://169.254.169.254/latest/meta-data", "is not allowed"),
            ("https://10.0.0.1/", "is not allowed"),
        ] {
            let error = check(&any, url).expect_err(url);
            assert!(error.contains(kind), "{url}: {error}");
        }
        let listed = policy(&["169.254.169.254", "10.0.0.1"]);
        assert_eq!(check(&listed, "https://10.0.0.1/"), Ok(()));
        assert_eq!(check(&listed, "https://169.254.169.254/"), Ok(()));
        for (address, kind) in [
            ("127.0.0.1", Some("loopback")),
            ("10.1.2.3", Some("private")),
            ("172.16.0.1", Some("private")),
            ("192.168.1.1", Some("private")),
            ("169.254.169.254", Some("link-local")),
            ("100.64.0.1", Some("shared (carrier-grade NAT)")),
            ("0.0.0.0", Some("unspecified")),
            ("224.0.0.1", Some("multicast or reserved")),
            ("::1", Some("loopback")),
            ("fd00::1", Some("private (unique local)")),
            ("fe80::1", Some("link-local")),
            ("::ffff:10.0.0.1", Some("private")),
            ("64:ff9b::a9fe:a9fe", Some("link-local")),
            ("93.184.216.34", None),
            ("2606:2800:220:1:248:1893:25c8:1946", None),
        ] {
            let ip: IpAddr = address.parse().expect("address");
            assert_eq!(not_public(ip), kind, "{address}");
        }
    }

    #[tokio::test]
    async fn webhook_names_that_resolve_to_private_addresses_are_refused_unless_listed() {
        // `localhost` resolves to loopback: by a wildcard it is refused,
        // listed by name it is allowed.
        let error = policy(&["*"])
            .check("https://localhost/hook")
            .await
            .expect_err("loopback by wildcard");
        assert!(error.contains("a loopback address"), "{error}");
        let error = policy(&["*.localhost"])
            .check("https://askbridge.localhost/hook")
            .await;
        assert!(error.is_err(), "{error:?}");
        assert_eq!(
            policy(&["localhost"])
                .check("http://localhost:1/hook")
                .await,
            Ok(())
        );
    }
}
