//! `[email]`: what the email section accepts, from the file and the
//! environment, and the rules it is checked by.

use std::time::Duration;

use askbridge_core::model::Target;
use askbridge_core::render::Locale;
use askbridge_email::run::Account;
use serde::Deserialize;

use super::{ConfigError, RawConfig, locale, set};

/// How often a mailbox without IDLE is looked at, unless said.
pub const DEFAULT_POLL: Duration = Duration::from_secs(60);

/// `[email]`: the email channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmailConfig {
    /// Where mail is sent from (`smtp_url`, `EMAIL_SMTP_PASSWORD`).
    pub smtp: Account,
    /// The bot's mailbox (`imap_url`, `EMAIL_IMAP_PASSWORD`).
    pub imap: Account,
    /// The bot's address as mails show it (`askbridge <bot@example.com>`).
    pub from: String,
    /// The bot's address alone, lower-cased (`bot@example.com`).
    pub address: String,
    /// Whether each ask's mail says `Reply-To: bot+<token>@…`.
    pub plus_addressing: bool,
    /// The folder replies arrive in (`INBOX`).
    pub folder: String,
    /// Where processed mail is moved, if anywhere.
    pub processed_folder: Option<String>,
    /// Who may answer, in the thread of an ask's mail, for the person it
    /// went to (addresses, lower case).
    pub allowed_senders: Vec<String>,
    /// Count a reply only when the receiving server's
    /// `Authentication-Results` says `dmarc=pass`.
    pub require_authentication: bool,
    /// The receiving server whose `Authentication-Results` are trusted.
    pub trusted_authserv_id: Option<String>,
    /// How often the mailbox is looked at when the server has no IDLE.
    pub poll: Duration,
    /// The language of askbridge's own words (default `en`).
    pub locale: Locale,
}

/// `[email]` as written.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawEmail {
    /// `enabled = true` (default: on when `smtp_url` is set).
    pub enabled: Option<bool>,
    /// `smtp_url = "smtps://bot%40example.com@smtp.example.com"`.
    pub smtp_url: Option<String>,
    /// `imap_url = "imaps://bot%40example.com@imap.example.com"`.
    pub imap_url: Option<String>,
    /// `from = "askbridge <bot@example.com>"`.
    pub from: Option<String>,
    /// `plus_addressing = true`.
    pub plus_addressing: Option<bool>,
    /// `folder = "INBOX"`.
    pub folder: Option<String>,
    /// `processed_folder = "askbridge/processed"`.
    pub processed_folder: Option<String>,
    /// `allowed_senders = ["ops@example.com"]`.
    pub allowed_senders: Option<Vec<String>>,
    /// `require_authentication = true`.
    pub require_authentication: Option<bool>,
    /// `trusted_authserv_id = "mx.example.com"`.
    pub trusted_authserv_id: Option<String>,
    /// `poll_seconds = 60`.
    pub poll_seconds: Option<u64>,
    /// `locale = "en"`, `"zh-CN"` or `"th"`.
    pub locale: Option<String>,
}

/// The address in `from` (`Name <addr>` or `addr`), lower-cased, if it
/// is one.
fn address_of(from: &str) -> Option<String> {
    let address = match (from.rfind('<'), from.rfind('>')) {
        (Some(open), Some(close)) if open < close => &from[open + 1..close],
        _ => from,
    };
    let target = Target::parse(&format!("email:{}", address.trim())).ok()?;
    target.place.direct_user()
}

impl RawConfig {
    /// `[email]`, when it is on: explicitly, or by `smtp_url`.
    pub(super) fn email_config(
        &self,
        invalid: &impl Fn(&'static str, String) -> ConfigError,
    ) -> Result<Option<EmailConfig>, ConfigError> {
        let raw = &self.email;
        if !raw.enabled.unwrap_or(set(&raw.smtp_url).is_some()) {
            return Ok(None);
        }
        let missing = |key: &'static str, what: &str| {
            invalid(
                key,
                format!("email is on but {what} is not set ({key} under [email])"),
            )
        };
        let smtp_url =
            set(&raw.smtp_url).ok_or_else(|| missing("email.smtp_url", "the SMTP server"))?;
        let imap_url =
            set(&raw.imap_url).ok_or_else(|| missing("email.imap_url", "the bot's mailbox"))?;
        let smtp = Account::parse(
            smtp_url,
            ("smtp", "smtps"),
            (587, 465),
            set(&self.email_smtp_password).map(str::to_owned),
        )
        .map_err(|message| invalid("email.smtp_url", message))?;
        let imap = Account::parse(
            imap_url,
            ("imap", "imaps"),
            (143, 993),
            set(&self.email_imap_password).map(str::to_owned),
        )
        .map_err(|message| invalid("email.imap_url", message))?;
        let from = match set(&raw.from) {
            Some(from) => from.to_owned(),
            None => imap
                .user
                .clone()
                .filter(|user| address_of(user).is_some())
                .ok_or_else(|| missing("email.from", "the bot's address"))?,
        };
        let address = address_of(&from).ok_or_else(|| {
            invalid(
                "email.from",
                format!("{from:?} is not an address (askbridge <bot@example.com>)"),
            )
        })?;
        let mut allowed_senders = Vec::new();
        for sender in raw.allowed_senders.iter().flatten() {
            match address_of(sender) {
                Some(address) => allowed_senders.push(address),
                None => {
                    return Err(invalid(
                        "email.allowed_senders",
                        format!("{sender:?} is not an address"),
                    ));
                }
            }
        }
        let require_authentication = raw.require_authentication.unwrap_or(false);
        let trusted_authserv_id = set(&raw.trusted_authserv_id).map(str::to_ascii_lowercase);
        if require_authentication && trusted_authserv_id.is_none() {
            return Err(invalid(
                "email.trusted_authserv_id",
                "require_authentication is on but trusted_authserv_id does not name the \
                 receiving server whose Authentication-Results count (mx.example.com)"
                    .to_owned(),
            ));
        }
        let poll = match raw.poll_seconds {
            Some(0) => {
                return Err(invalid(
                    "email.poll_seconds",
                    "must be at least 1".to_owned(),
                ));
            }
            Some(seconds) => Duration::from_secs(seconds),
            None => DEFAULT_POLL,
        };
        Ok(Some(EmailConfig {
            smtp,
            imap,
            from,
            address,
            plus_addressing: raw.plus_addressing.unwrap_or(true),
            folder: set(&raw.folder).unwrap_or("INBOX").to_owned(),
            processed_folder: set(&raw.processed_folder).map(str::to_owned),
            allowed_senders,
            require_authentication,
            trusted_authserv_id,
            poll,
            locale: locale(raw.locale.as_deref(), "email.locale", invalid)?,
        }))
    }
}

#[cfg(test)]
mod tests {
    use crate::config::tests::from;

    #[test]
    fn config_email_is_on_with_its_servers_and_reads_its_section() {
        assert_eq!(from("", &[]).expect("valid").email, None);
        let text = "[email]\nsmtp_url = \"smtps://bot%40example.com@smtp.example.com\"\n\
                    imap_url = \"imaps://bot%40example.com@imap.example.com\"\n";
        let env = [
            ("EMAIL_SMTP_PASSWORD", "s3cret"),
            ("EMAIL_IMAP_PASSWORD", "1map"),
        ];
        let email = from(text, &env).expect("valid").email.expect("on");
        assert_eq!(email.smtp.port, 465);
        assert_eq!(email.imap.port, 993);
        assert_eq!(email.smtp.user.as_deref(), Some("bot@example.com"));
        assert_eq!(email.imap.password.as_deref(), Some("1map"));
        assert_eq!(email.from, "bot@example.com", "the IMAP user by default");
        assert_eq!(email.address, "bot@example.com");
        assert!(email.plus_addressing);
        assert_eq!(email.folder, "INBOX");
        assert!(!email.require_authentication);
        assert!(!format!("{email:?}").contains("s3cret"), "a secret leaked");

        let text = format!(
            "{text}from = \"askbridge <Bot@Example.com>\"\nfolder = \"askbridge\"\n\
             processed_folder = \"askbridge/done\"\nallowed_senders = [\"Ops@example.com\"]\n\
             require_authentication = true\ntrusted_authserv_id = \"MX.example.com\"\n\
             plus_addressing = false\npoll_seconds = 5\nlocale = \"th\"\n"
        );
        let email = from(&text, &env).expect("valid").email.expect("on");
        assert_eq!(email.address, "bot@example.com");
        assert_eq!(email.from, "askbridge <Bot@Example.com>");
        assert_eq!(email.allowed_senders, ["ops@example.com"]);
        assert_eq!(email.trusted_authserv_id.as_deref(), Some("mx.example.com"));
        assert_eq!(email.processed_folder.as_deref(), Some("askbridge/done"));
        assert!(!email.plus_addressing);
        assert_eq!(email.poll.as_secs(), 5);
    }

    #[test]
    fn config_email_says_what_is_wrong_and_where() {
        let smtp = "smtp_url = \"smtp://127.0.0.1:2525\"\n";
        let imap = "imap_url = \"imap://bot%40example.com@127.0.0.1:1143\"\n";
        for (text, error) in [
            (
                format!("[email]\n{smtp}"),
                "email.imap_url: email is on but the bot's mailbox",
            ),
            (
                format!("[email]\nenabled = true\n{imap}"),
                "email.smtp_url: email is on",
            ),
            (
                format!("[email]\n{smtp}imap_url = \"pop3://host\"\n"),
                "email.imap_url: pop3:// is not imap:// or imaps://",
            ),
            (
                format!("[email]\nsmtp_url = \"smtp://bot:pw@host\"\n{imap}"),
                "email.smtp_url: the URL holds a password",
            ),
            (
                format!("[email]\n{smtp}{imap}from = \"a robot\"\n"),
                "email.from: \"a robot\" is not an address",
            ),
            (
                format!("[email]\n{smtp}imap_url = \"imap://127.0.0.1:1143\"\n"),
                "email.from: email is on but the bot's address is not set",
            ),
            (
                format!("[email]\n{smtp}{imap}require_authentication = true\n"),
                "email.trusted_authserv_id: require_authentication is on",
            ),
            (
                format!("[email]\n{smtp}{imap}allowed_senders = [\"ops\"]\n"),
                "email.allowed_senders: \"ops\" is not an address",
            ),
            (
                format!("[email]\n{smtp}{imap}poll_seconds = 0\n"),
                "email.poll_seconds",
            ),
            (
                format!("[email]\n{smtp}{imap}render = \"rich\"\n"),
                "unknown field `render`",
            ),
        ] {
            let got = from(&text, &[]).expect_err(&text);
            assert!(got.contains(error), "{text}\n{got}");
        }
    }
}
