//! `[matrix]`: what the Matrix section accepts, from the file and the
//! environment, and the rules it is checked by.

use askbridge_core::model::Target;
use askbridge_core::render::{Locale, Mode};
use serde::Deserialize;

use super::{
    ChatRules, ChatSection, ConfigError, RawConfig, Secret, Shared, SharedKeys, bot_token,
    http_url, set,
};

/// `[matrix]`: the Matrix channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatrixConfig {
    /// The homeserver's URL (`https://matrix.example.org`).
    pub homeserver: String,
    /// The bot's user id (`@askbridge:example.org`).
    pub user_id: String,
    /// `MATRIX_ACCESS_TOKEN`, if set.
    pub access_token: Option<Secret>,
    /// `MATRIX_PASSWORD`, if set: logs in once, the session is kept.
    pub password: Option<Secret>,
    /// `buttons` (default: polls), `text` or `rich` (a poll per
    /// question).
    pub render: Mode,
    /// The language of askbridge's own words (default `en`).
    pub locale: Locale,
    /// Who may answer asks that name no user (`@name:server`); empty:
    /// everyone in the room.
    pub allowed_users: Vec<String>,
    /// Accept invites: from allowed users, from anyone when there is no
    /// list (default on).
    pub auto_join: bool,
    /// Encrypt the direct chats askbridge opens (default on).
    pub encrypt_direct: bool,
}

/// `[matrix]` as written: the shared keys but `api_url` (the homeserver
/// is its own key), and two flags.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMatrix {
    /// `enabled = true` (default: on when a token or password is set).
    pub enabled: Option<bool>,
    /// `homeserver = "https://matrix.example.org"`.
    pub homeserver: Option<String>,
    /// `user_id = "@askbridge:example.org"`.
    pub user_id: Option<String>,
    /// `render = "buttons"` or `"text"`.
    pub render: Option<String>,
    /// `locale = "en"`, `"zh-CN"` or `"th"`.
    pub locale: Option<String>,
    /// `allowed_users = ["@alice:example.org"]`.
    pub allowed_users: Option<Vec<String>>,
    /// `auto_join = true`: accept invites.
    pub auto_join: Option<bool>,
    /// `encrypt_direct = true`: encrypt the direct chats askbridge opens.
    pub encrypt_direct: Option<bool>,
}

impl ChatSection for RawMatrix {
    fn shared(&self) -> SharedKeys<'_> {
        SharedKeys {
            api_url: None,
            render: self.render.as_deref(),
            locale: self.locale.as_deref(),
            allowed_users: self.allowed_users.as_deref().unwrap_or_default(),
        }
    }
}

const MATRIX_RULES: ChatRules = ChatRules {
    keys: [
        "matrix.homeserver",
        "matrix.render",
        "matrix.locale",
        "matrix.allowed_users",
    ],
    locale: Locale::En,
    user: |user| Target::parse(&format!("matrix:user/{user}")).is_ok() && user.starts_with('@'),
    not_a_user: "is not a Matrix user id (@name:server)",
};

impl RawConfig {
    /// `[matrix]`, when it is on: explicitly, or by `MATRIX_ACCESS_TOKEN`
    /// or `MATRIX_PASSWORD`.
    pub(super) fn matrix_config(
        &self,
        invalid: &impl Fn(&'static str, String) -> ConfigError,
    ) -> Result<Option<MatrixConfig>, ConfigError> {
        let raw = &self.matrix;
        let token = set(&self.matrix_access_token);
        let password = set(&self.matrix_password);
        let secret = token.or(password).map(str::to_owned);
        let on = (
            "matrix.enabled",
            "Matrix",
            "MATRIX_ACCESS_TOKEN (or MATRIX_PASSWORD)",
        );
        if bot_token(raw.enabled, &secret, on, invalid)?.is_none() {
            return Ok(None);
        }
        let homeserver = match set(&raw.homeserver) {
            Some(url) => http_url(url).map_err(|message| invalid("matrix.homeserver", message))?,
            None => {
                return Err(invalid(
                    "matrix.homeserver",
                    "Matrix is on but its homeserver is not set (homeserver = \"https://matrix.example.org\" under [matrix])".to_owned(),
                ));
            }
        };
        let user_id = match set(&raw.user_id) {
            Some(user) if (MATRIX_RULES.user)(user) => user.to_owned(),
            Some(user) => {
                return Err(invalid(
                    "matrix.user_id",
                    format!("{user:?} {}", MATRIX_RULES.not_a_user),
                ));
            }
            None => {
                return Err(invalid(
                    "matrix.user_id",
                    "Matrix is on but the bot's user id is not set (user_id = \"@askbridge:example.org\" under [matrix])".to_owned(),
                ));
            }
        };
        let Shared {
            render,
            locale,
            allowed_users,
            ..
        } = raw.common(&MATRIX_RULES, invalid)?;
        Ok(Some(MatrixConfig {
            homeserver,
            user_id,
            access_token: token.map(Secret::new),
            password: password.map(Secret::new),
            render,
            locale,
            allowed_users,
            auto_join: raw.auto_join.unwrap_or(true),
            encrypt_direct: raw.encrypt_direct.unwrap_or(true),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::tests::{check_error, from};

    #[test]
    fn config_matrix_is_on_with_a_token_or_password_and_reads_its_section() {
        assert_eq!(from("", &[]).expect("valid").matrix, None);
        let text = "[matrix]\nhomeserver = \"https://matrix.example.org\"\nuser_id = \"@askbridge:example.org\"\n";
        let matrix = from(text, &[("MATRIX_ACCESS_TOKEN", "syt_s3cret")])
            .expect("valid")
            .matrix
            .expect("on");
        assert_eq!(matrix.homeserver, "https://matrix.example.org");
        assert_eq!(matrix.user_id, "@askbridge:example.org");
        assert_eq!((matrix.render, matrix.locale), (Mode::Buttons, Locale::En));
        assert!(
            matrix.auto_join && matrix.encrypt_direct,
            "both on by default"
        );
        assert_eq!(matrix.password, None);
        assert!(!format!("{matrix:?}").contains("s3cret"), "a secret leaked");

        let text = format!(
            "{text}render = \"text\"\nlocale = \"th\"\nallowed_users = [\"@alice:example.org\"]\nauto_join = false\nencrypt_direct = false\n"
        );
        let matrix = from(&text, &[("MATRIX_PASSWORD", "pw")])
            .expect("valid")
            .matrix
            .expect("on by the password");
        assert_eq!((matrix.render, matrix.locale), (Mode::Text, Locale::Th));
        assert_eq!(matrix.allowed_users, ["@alice:example.org"]);
        assert!(!matrix.auto_join && !matrix.encrypt_direct);
        assert_eq!(matrix.password, Some(Secret::new("pw")));
        let rich = "[matrix]\nhomeserver = \"https://hs.example\"\nuser_id = \"@bot:hs.example\"\nrender = \"rich\"\n";
        let rich = from(rich, &[("MATRIX_ACCESS_TOKEN", "syt_1")])
            .expect("rich is a Matrix mode")
            .matrix
            .expect("on");
        assert_eq!(rich.render, Mode::Rich);
    }

    #[test]
    fn config_matrix_errors_name_the_key_and_where_it_came_from() {
        let token = ("MATRIX_ACCESS_TOKEN", "syt_1");
        let base = "[matrix]\nhomeserver = \"https://hs.example\"\nuser_id = \"@bot:hs.example\"\n";
        check_error(
            "[matrix]\nenabled = true\n",
            &[],
            "config/askbridge.toml: matrix.enabled: Matrix is on but MATRIX_ACCESS_TOKEN (or MATRIX_PASSWORD) is not set",
        );
        check_error(
            "",
            &[token],
            "config/askbridge.toml: matrix.homeserver: Matrix is on but its homeserver is not set (homeserver = \"https://matrix.example.org\" under [matrix])",
        );
        check_error(
            "[matrix]\nhomeserver = \"https://hs.example\"\nuser_id = \"bot\"\n",
            &[token],
            "config/askbridge.toml: matrix.user_id: \"bot\" is not a Matrix user id (@name:server)",
        );
        check_error(
            &format!("{base}allowed_users = [\"alice\"]\n"),
            &[token],
            "config/askbridge.toml: matrix.allowed_users: \"alice\" is not a Matrix user id (@name:server)",
        );
        let in_file = from(&format!("{base}access_token = \"syt_1\"\n"), &[])
            .expect_err("a secret in the file")
            .to_string();
        assert!(
            in_file.contains("unknown field `access_token`"),
            "{in_file}"
        );
    }
}
