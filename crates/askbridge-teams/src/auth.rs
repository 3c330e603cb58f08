//! The check of what the Bot Connector posts: each request's
//! `Authorization: Bearer` token, as the Bot Framework requires.
//!
//! The token is a JWT signed with RS256 by a key the Bot Connector
//! publishes: its OpenID metadata (`openid_metadata_url`, by default
//! `https://login.botframework.com/v1/.well-known/openidconfiguration`)
//! names the issuer and the key set (`jwks_uri`). A token counts when
//!
//! - its header names RS256 and a key of that set (`kid`), and the key
//!   signed it (`alg: none`, HMAC and unknown keys never count);
//! - its issuer is the metadata's, its audience the bot's app id, and it
//!   has not expired (`exp`, `nbf`; five minutes of clock skew);
//! - the key is endorsed for the activity's channel (`msteams`) when it
//!   lists endorsements, and its `serviceurl` claim (lower case, as the
//!   Bot Connector writes it and Microsoft's SDKs read it:
//!   `AuthenticationConstants.ServiceUrlClaim`) is the activity's
//!   `serviceUrl`. A claim of another spelling does not count.
//!
//! Before any token is looked at, an activity is taken only from Teams
//! ([`teams_only`]: `channelId` is `msteams`); with the check switched off
//! (for Microsoft's Agents Playground), only from a Bot Connector on this
//! machine ([`loopback_url`]), so nobody can point a conversation at a
//! server of theirs and receive the bot's own token with what it posts.
//!
//! The metadata and keys are fetched once and kept for a day; a token
//! naming a key not in the set fetches them again (at most every five
//! minutes), so a rotated key is picked up at once.

use std::time::{Duration, Instant};

use jsonwebtoken::{Algorithm, DecodingKey, Validation, decode, decode_header};
use serde::Deserialize;
use tokio::sync::Mutex;

/// The token claim naming the Bot Connector the activity came from, as
/// the Bot Connector writes it (all lower case, unlike the activity's
/// `serviceUrl` field).
pub const SERVICE_URL_CLAIM: &str = "serviceurl";
/// The Bot Connector's OpenID metadata.
pub const BOT_FRAMEWORK_METADATA: &str =
    "https://login.botframework.com/v1/.well-known/openidconfiguration";
/// The `channelId` of Teams' activities, the only one taken.
pub const TEAMS_CHANNEL: &str = "msteams";
/// Clock skew allowed on `exp` and `nbf`.
const LEEWAY_SECS: u64 = 300;
/// How long fetched keys are used.
const KEYS_FOR: Duration = Duration::from_secs(24 * 60 * 60);
/// How soon keys are fetched again for a key not among them.
const REFETCH_AFTER: Duration = Duration::from_secs(5 * 60);

/// Why a request was refused (answered 401, nothing done).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Unauthorized(pub String);

/// The issuer and keys that sign the Bot Connector's tokens.
#[derive(Debug, Clone, Default)]
pub struct Keys {
    /// The `issuer` of the OpenID metadata.
    pub issuer: String,
    /// The keys, by `kid`.
    pub keys: Vec<Key>,
}

/// One published key.
#[derive(Debug, Clone, Deserialize)]
pub struct Key {
    /// Its id.
    pub kid: String,
    /// Its type; only `RSA` keys are used.
    #[serde(default)]
    pub kty: String,
    /// The RSA modulus, base64url.
    #[serde(default)]
    pub n: String,
    /// The RSA exponent, base64url.
    #[serde(default)]
    pub e: String,
    /// The channels it signs for (`msteams`, …), when it says.
    #[serde(default)]
    pub endorsements: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
struct Metadata {
    issuer: String,
    jwks_uri: String,
}

#[derive(Debug, Deserialize)]
struct KeySet {
    keys: Vec<Key>,
}

/// The claims read beyond those `jsonwebtoken` checks.
#[derive(Debug, Deserialize)]
struct Claims {
    /// [`SERVICE_URL_CLAIM`].
    #[serde(rename = "serviceurl", default)]
    service_url: Option<String>,
}

/// What an activity's token is checked against.
#[derive(Debug, Clone, Copy)]
pub struct Expected<'a> {
    /// The bot's app id (the audience).
    pub app_id: &'a str,
    /// The activity's `channelId`.
    pub channel_id: &'a str,
    /// The activity's `serviceUrl`.
    pub service_url: &'a str,
}

/// Checks `authorization` (the header's value) against `keys`.
pub fn check(
    authorization: Option<&str>,
    keys: &Keys,
    expected: Expected<'_>,
) -> Result<(), Unauthorized> {
    let token = bearer(authorization)?;
    let header =
        decode_header(token).map_err(|error| Unauthorized(format!("unreadable token: {error}")))?;
    if header.alg != Algorithm::RS256 {
        return Err(Unauthorized(format!(
            "token signed with {:?}, not RS256",
            header.alg
        )));
    }
    let kid = header
        .kid
        .ok_or_else(|| Unauthorized("the token names no key (kid)".to_owned()))?;
    let key = keys
        .keys
        .iter()
        .find(|key| key.kid == kid && key.kty == "RSA")
        .ok_or_else(|| {
            Unauthorized(format!(
                "the token's key {kid:?} is not the Bot Connector's"
            ))
        })?;
    if let Some(endorsements) = &key.endorsements
        && !endorsements
            .iter()
            .any(|channel| channel == expected.channel_id)
    {
        return Err(Unauthorized(format!(
            "the token's key is not endorsed for channel {:?}",
            expected.channel_id
        )));
    }
    let decoding = DecodingKey::from_rsa_components(&key.n, &key.e)
        .map_err(|error| Unauthorized(format!("unusable key {kid:?}: {error}")))?;
    let mut validation = Validation::new(Algorithm::RS256);
    validation.set_issuer(&[keys.issuer.as_str()]);
    validation.set_audience(&[expected.app_id]);
    validation.leeway = LEEWAY_SECS;
    validation.validate_nbf = true;
    validation.set_required_spec_claims(&["exp", "iss", "aud"]);
    let claims = decode::<Claims>(token, &decoding, &validation)
        .map_err(|error| Unauthorized(format!("token refused: {error}")))?
        .claims;
    match claims.service_url {
        Some(url) if same_url(&url, expected.service_url) => Ok(()),
        Some(url) => Err(Unauthorized(format!(
            "the token is for serviceurl {url:?}, not the activity's serviceUrl {:?}",
            expected.service_url
        ))),
        None => Err(Unauthorized(format!(
            "the token has no {SERVICE_URL_CLAIM} claim"
        ))),
    }
}

/// Refuses an activity from any channel but Teams (`channelId` other
/// than `msteams`): the bot is a Teams bot, and a key endorsed for
/// another channel must not speak for Teams.
pub fn teams_only(channel_id: Option<&str>) -> Result<(), Unauthorized> {
    match channel_id {
        Some(TEAMS_CHANNEL) => Ok(()),
        Some(other) => Err(Unauthorized(format!(
            "the activity's channelId is {other:?}: only {TEAMS_CHANNEL:?} activities are taken"
        ))),
        None => Err(Unauthorized(format!(
            "the activity has no channelId: only {TEAMS_CHANNEL:?} activities are taken"
        ))),
    }
}

/// Whether `url` is an `http(s)` URL of this machine: `localhost`, or a
/// loopback address (`127.0.0.0/8`, `::1`).
pub fn loopback_url(url: &str) -> bool {
    let Ok(url) = reqwest::Url::parse(url) else {
        return false;
    };
    let web = matches!(url.scheme(), "http" | "https");
    // The URL parser has lowered names and written addresses plainly
    // (`127.1` is `127.0.0.1`; an IPv6 one in brackets).
    let host = url.host_str().unwrap_or_default();
    let address = host.trim_start_matches('[').trim_end_matches(']');
    let local = host == "localhost"
        || address
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    web && local
}

/// The token of `Bearer <token>`.
fn bearer(authorization: Option<&str>) -> Result<&str, Unauthorized> {
    let value = authorization.ok_or_else(|| Unauthorized("no Authorization header".to_owned()))?;
    let (scheme, token) = value
        .trim()
        .split_once(' ')
        .ok_or_else(|| Unauthorized("Authorization is not a bearer token".to_owned()))?;
    match scheme.eq_ignore_ascii_case("bearer") && !token.trim().is_empty() {
        true => Ok(token.trim()),
        false => Err(Unauthorized(
            "Authorization is not a bearer token".to_owned(),
        )),
    }
}

/// URLs equal but for a trailing slash.
fn same_url(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

/// The keys, fetched from the metadata and kept ([`check`] against them).
#[derive(Debug)]
pub struct TokenCheck {
    app_id: String,
    metadata_url: String,
    http: reqwest::Client,
    cached: Mutex<Option<(Instant, Keys)>>,
}

impl TokenCheck {
    /// Checks tokens for the bot `app_id`, with the keys `metadata_url`
    /// names.
    pub fn new(app_id: &str, metadata_url: &str, http: reqwest::Client) -> TokenCheck {
        TokenCheck {
            app_id: app_id.to_owned(),
            metadata_url: metadata_url.to_owned(),
            http,
            cached: Mutex::new(None),
        }
    }

    /// Checks a request's `Authorization` for an activity of `channel_id`
    /// from `service_url`.
    pub async fn check(
        &self,
        authorization: Option<&str>,
        channel_id: &str,
        service_url: &str,
    ) -> Result<(), Unauthorized> {
        let expected = Expected {
            app_id: &self.app_id,
            channel_id,
            service_url,
        };
        let keys = self.keys(false).await?;
        match check(authorization, &keys, expected) {
            Err(refused) if refused.0.contains("is not the Bot Connector's") => {
                match self.keys(true).await {
                    Ok(fresh) => check(authorization, &fresh, expected),
                    Err(_) => Err(refused),
                }
            }
            checked => checked,
        }
    }

    /// The keys: cached, or fetched (again, with `renew`, when the cached
    /// ones are more than a few minutes old).
    async fn keys(&self, renew: bool) -> Result<Keys, Unauthorized> {
        let mut cached = self.cached.lock().await;
        if let Some((fetched, keys)) = cached.as_ref() {
            let age = fetched.elapsed();
            if age < KEYS_FOR && !(renew && age >= REFETCH_AFTER) {
                return Ok(keys.clone());
            }
        }
        let keys = self.fetch().await.map_err(|error| {
            tracing::warn!(error = %error, "cannot fetch the Bot Connector's keys");
            Unauthorized(format!(
                "the Bot Connector's keys cannot be fetched: {error}"
            ))
        })?;
        *cached = Some((Instant::now(), keys.clone()));
        Ok(keys)
    }

    async fn fetch(&self) -> Result<Keys, reqwest::Error> {
        let metadata: Metadata = self
            .http
            .get(&self.metadata_url)
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        let set: KeySet = self
            .http
            .get(&metadata.jwks_uri)
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        Ok(Keys {
            issuer: metadata.issuer,
            keys: set.keys,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::{SystemTime, UNIX_EPOCH};

    use jsonwebtoken::{EncodingKey, Header, encode};
    use serde_json::{Value, json};

    use super::*;

    /// Test-only keys (`tests/keys`): one the keys list, one they do not.
    const SIGNER: &str = include_str!("../tests/keys/signer.pem");
    const STRANGER: &str = include_str!("../tests/keys/stranger.pem");
    const SIGNER_N: &str = include_str!("../tests/keys/signer.n");

    const ISSUER: &str = "https://api.botframework.com";
    const APP: &str = "00000000-0000-0000-0000-00000000b07";
    const SERVICE: &str = "https://smba.trafficmanager.net/amer/";

    fn keys(endorsements: Option<Vec<String>>) -> Keys {
        Keys {
            issuer: ISSUER.to_owned(),
            keys: vec![Key {
                kid: "k1".to_owned(),
                kty: "RSA".to_owned(),
                n: SIGNER_N.trim().to_owned(),
                e: "AQAB".to_owned(),
                endorsements,
            }],
        }
    }

    fn now() -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| since.as_secs())
    }

    fn claims() -> Value {
        json!({
            "iss": ISSUER, "aud": APP, "exp": now() + 3_600, "nbf": now() - 60,
            "serviceurl": SERVICE,
        })
    }

    fn signed(pem: &str, kid: &str, claims: &Value) -> String {
        let mut header = Header::new(Algorithm::RS256);
        header.kid = Some(kid.to_owned());
        let key = EncodingKey::from_rsa_pem(pem.as_bytes()).expect("a test key");
        format!("Bearer {}", encode(&header, claims, &key).expect("signed"))
    }

    fn checked(authorization: Option<&str>) -> Result<(), Unauthorized> {
        check(
            authorization,
            &keys(Some(vec!["msteams".to_owned()])),
            Expected {
                app_id: APP,
                channel_id: "msteams",
                service_url: SERVICE,
            },
        )
    }

    /// `alg: none`, unsigned.
    fn unsigned(claims: &Value) -> String {
        use base64::Engine as _;
        let b64 = |value: &Value| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(value.to_string())
        };
        format!(
            "Bearer {}.{}.",
            b64(&json!({"alg": "none", "typ": "JWT", "kid": "k1"})),
            b64(claims)
        )
    }

    #[test]
    fn a_token_the_bot_connector_signed_for_this_bot_counts() {
        assert_eq!(checked(Some(&signed(SIGNER, "k1", &claims()))), Ok(()));
        // A trailing slash on either URL is the same service.
        let mut claims = claims();
        claims["serviceurl"] = json!(SERVICE.trim_end_matches('/'));
        assert_eq!(checked(Some(&signed(SIGNER, "k1", &claims))), Ok(()));
    }

    #[test]
    fn forged_expired_and_misdirected_tokens_are_refused_saying_why() {
        let with = |key: &str, value: Value| {
            let mut claims = claims();
            claims[key] = value;
            claims
        };
        let expired = with("exp", json!(now() - LEEWAY_SECS - 60));
        let early = with("nbf", json!(now() + LEEWAY_SECS + 60));
        let other_bot = with("aud", json!("another-app"));
        let other_issuer = with("iss", json!("https://sts.windows.net/evil/"));
        let other_service = with("serviceurl", json!("https://evil.example/"));
        let mut no_service = claims();
        no_service
            .as_object_mut()
            .expect("claims")
            .remove("serviceurl");
        // The activity's field name is not the claim's: a token saying
        // `serviceUrl` was not written by the Bot Connector.
        let mut camel_case = no_service.clone();
        camel_case["serviceUrl"] = json!(SERVICE);
        // (authorization, what the refusal says)
        let table = [
            (None, "no Authorization header"),
            (Some("Basic abc".to_owned()), "not a bearer token"),
            (Some("Bearer not-a-jwt".to_owned()), "unreadable token"),
            (Some(signed(SIGNER, "k1", &expired)), "ExpiredSignature"),
            (Some(signed(SIGNER, "k1", &early)), "ImmatureSignature"),
            (Some(signed(SIGNER, "k1", &other_bot)), "InvalidAudience"),
            (Some(signed(SIGNER, "k1", &other_issuer)), "InvalidIssuer"),
            (Some(signed(STRANGER, "k1", &claims())), "InvalidSignature"),
            (
                Some(signed(SIGNER, "k2", &claims())),
                "is not the Bot Connector's",
            ),
            (Some(unsigned(&claims())), "unreadable token"),
            (
                Some(signed(SIGNER, "k1", &other_service)),
                "not the activity's",
            ),
            (
                Some(signed(SIGNER, "k1", &no_service)),
                "no serviceurl claim",
            ),
            (
                Some(signed(SIGNER, "k1", &camel_case)),
                "no serviceurl claim",
            ),
        ];
        for (authorization, says) in table {
            let refused = checked(authorization.as_deref()).expect_err(says);
            assert!(refused.0.contains(says), "{says}: {refused}");
        }
    }

    #[test]
    fn a_key_endorsed_for_other_channels_only_is_refused() {
        let keys = keys(Some(vec!["skype".to_owned()]));
        let expected = Expected {
            app_id: APP,
            channel_id: "msteams",
            service_url: SERVICE,
        };
        let token = signed(SIGNER, "k1", &claims());
        let refused = check(Some(&token), &keys, expected).expect_err("not endorsed");
        assert!(refused.0.contains("not endorsed"), "{refused}");
        assert_eq!(
            check(Some(&token), &super::tests::keys(None), expected),
            Ok(())
        );
    }

    #[test]
    fn only_teams_activities_are_taken() {
        assert_eq!(teams_only(Some("msteams")), Ok(()));
        for other in [
            Some("webchat"),
            Some("emulator"),
            Some("MSTeams"),
            Some(""),
            None,
        ] {
            let refused = teams_only(other).expect_err("not Teams");
            assert!(refused.0.contains("only \"msteams\""), "{refused}");
        }
    }

    #[test]
    fn only_urls_of_this_machine_are_loopback() {
        let local = [
            "http://localhost:3978/_connector",
            "http://LOCALHOST/",
            "https://127.0.0.1:9/",
            "http://127.1/",
            "http://127.9.9.9/",
            "http://[::1]:8080/x",
        ];
        for url in local {
            assert!(loopback_url(url), "{url}");
        }
        let foreign = [
            SERVICE,
            "https://evil.example/",
            "http://localhost.evil.example/",
            "http://127.0.0.1.nip.io/",
            "http://0.0.0.0/",
            "http://10.0.0.1/",
            "http://[::ffff:8.8.8.8]/",
            "ftp://127.0.0.1/",
            "file:///tmp/x",
            "not a url",
            "",
        ];
        for url in foreign {
            assert!(!loopback_url(url), "{url}");
        }
    }
}
