//! `[feishu]`: what the Feishu / Lark section accepts, from the file and
//! the environment, and the rules it is checked by.

use askbridge_core::render::{Locale, Mode};
use serde::Deserialize;

use super::{
    ChatRules, ChatSection, ConfigError, RawConfig, Secret, Shared, SharedKeys, bot_token,
    chat_section, set,
};

/// `[feishu]`: the Feishu / Lark channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeishuConfig {
    /// The app's id (`cli_…`).
    pub app_id: String,
    /// The app's secret (`FEISHU_APP_SECRET`).
    pub app_secret: Secret,
    /// The Open API host: `https://open.feishu.cn` (default),
    /// `https://open.larksuite.com` for Lark, or a local fake; askbridge
    /// appends `/open-apis/…`.
    pub api_url: Option<String>,
    /// How events and card callbacks arrive.
    pub mode: FeishuMode,
    /// The verification token (`FEISHU_VERIFICATION_TOKEN`): pushes that
    /// carry another are refused.
    pub verification_token: Option<Secret>,
    /// `buttons` (default), `text` or `rich`.
    pub render: Mode,
    /// The language of askbridge's own words (default `zh-CN`).
    pub locale: Locale,
    /// Who may answer asks that name no user (`ou_…` open ids); empty:
    /// everyone in the chat.
    pub allowed_users: Vec<String>,
}

/// How Feishu events and card callbacks arrive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FeishuMode {
    /// The long connection (default): a WebSocket askbridge opens, no
    /// public URL.
    LongConnection,
    /// Feishu posts to `/feishu/events`, encrypted and signed.
    Webhook {
        /// The encrypt key (`FEISHU_ENCRYPT_KEY`).
        encrypt_key: Secret,
    },
}

chat_section! {
    /// `[feishu]` as written.
    RawFeishu {
        /// `app_id = "cli_a1b2c3"`.
        app_id,
        /// `mode = "websocket"` or `"webhook"`.
        mode,
    }
}

const FEISHU_RULES: ChatRules = ChatRules {
    keys: [
        "feishu.api_url",
        "feishu.render",
        "feishu.locale",
        "feishu.allowed_users",
    ],
    locale: Locale::ZhCn,
    user: |user| {
        user.len() > 3
            && user.starts_with("ou_")
            && user.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    },
    not_a_user: "is not a Feishu open_id (ou_…)",
};

impl RawConfig {
    /// `[feishu]`, when it is on: explicitly, or by `FEISHU_APP_SECRET`.
    pub(super) fn feishu_config(
        &self,
        invalid: &impl Fn(&'static str, String) -> ConfigError,
    ) -> Result<Option<FeishuConfig>, ConfigError> {
        let raw = &self.feishu;
        let on = ("feishu.enabled", "Feishu", "FEISHU_APP_SECRET");
        let Some(secret) = bot_token(raw.enabled, &self.feishu_app_secret, on, invalid)? else {
            return Ok(None);
        };
        let app_id = match set(&raw.app_id) {
            Some(id) if id.starts_with("cli_") && !id.contains(char::is_whitespace) => id,
            Some(id) => {
                return Err(invalid(
                    "feishu.app_id",
                    format!(
                        "{id:?} is not an app id (expected cli_…, from Credentials & Basic Info)"
                    ),
                ));
            }
            None => {
                return Err(invalid(
                    "feishu.app_id",
                    "Feishu is on but its app id is not set (app_id = \"cli_…\" under [feishu], or FEISHU_APP_ID)".to_owned(),
                ));
            }
        };
        let mode = match raw
            .mode
            .as_deref()
            .map(|m| m.trim().to_ascii_lowercase())
            .as_deref()
        {
            None | Some("websocket") => FeishuMode::LongConnection,
            Some("webhook") => match set(&self.feishu_encrypt_key) {
                Some(key) => FeishuMode::Webhook {
                    encrypt_key: Secret::new(key),
                },
                None => {
                    return Err(invalid(
                        "feishu.mode",
                        "webhook mode needs FEISHU_ENCRYPT_KEY (Events & Callbacks → Encryption Strategy)".to_owned(),
                    ));
                }
            },
            Some(other) => {
                return Err(invalid(
                    "feishu.mode",
                    format!("unknown mode {other:?}; expected \"websocket\" or \"webhook\""),
                ));
            }
        };
        let Shared {
            api_url,
            render,
            locale,
            allowed_users,
        } = raw.common(&FEISHU_RULES, invalid)?;
        Ok(Some(FeishuConfig {
            app_id: app_id.to_owned(),
            app_secret: Secret::new(secret),
            api_url,
            mode,
            verification_token: set(&self.feishu_verification_token).map(Secret::new),
            render,
            locale,
            allowed_users,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::tests::{check_error, from};

    #[test]
    fn config_feishu_is_on_with_a_secret_and_reads_its_section() {
        assert_eq!(from("", &[]).expect("valid").feishu, None);
        let env = [("FEISHU_APP_SECRET", "s3cret"), ("FEISHU_APP_ID", "cli_a1")];
        let feishu = from("", &env).expect("valid").feishu.expect("on");
        assert_eq!(feishu.app_id, "cli_a1");
        assert_eq!(feishu.mode, FeishuMode::LongConnection);
        assert_eq!(feishu.locale, Locale::ZhCn, "Chinese unless told otherwise");
        assert!(!format!("{feishu:?}").contains("s3cret"), "a secret leaked");
        let text = "[feishu]\napp_id = \"cli_b2\"\napi_url = \"https://open.larksuite.com\"\nmode = \"webhook\"\nrender = \"rich\"\nlocale = \"en\"\nallowed_users = [\"ou_1\"]\n";
        let env = [
            ("FEISHU_APP_SECRET", "s3cret"),
            ("FEISHU_ENCRYPT_KEY", "k"),
            ("FEISHU_VERIFICATION_TOKEN", "vt"),
        ];
        let feishu = from(text, &env).expect("valid").feishu.expect("on");
        assert_eq!(
            feishu.api_url.as_deref(),
            Some("https://open.larksuite.com")
        );
        assert_eq!(
            feishu.mode,
            FeishuMode::Webhook {
                encrypt_key: Secret::new("k")
            }
        );
        assert_eq!((feishu.render, feishu.locale), (Mode::Rich, Locale::En));
        assert_eq!(feishu.allowed_users, ["ou_1"]);
        assert_eq!(feishu.verification_token, Some(Secret::new("vt")));
    }

    #[test]
    fn config_feishu_errors_name_the_key_and_where_it_came_from() {
        let secret = ("FEISHU_APP_SECRET", "s3cret");
        check_error(
            "[feishu]\nenabled = true\n",
            &[],
            "config/askbridge.toml: feishu.enabled: Feishu is on but FEISHU_APP_SECRET is not set",
        );
        check_error(
            "",
            &[secret],
            "config/askbridge.toml: feishu.app_id: Feishu is on but its app id is not set (app_id = \"cli_…\" under [feishu], or FEISHU_APP_ID)",
        );
        check_error(
            "",
            &[secret, ("FEISHU_APP_ID", "a1")],
            "FEISHU_APP_ID: \"a1\" is not an app id (expected cli_…, from Credentials & Basic Info)",
        );
        check_error(
            "[feishu]\napp_id = \"cli_1\"\nmode = \"webhook\"\n",
            &[secret],
            "config/askbridge.toml: feishu.mode: webhook mode needs FEISHU_ENCRYPT_KEY (Events & Callbacks → Encryption Strategy)",
        );
        check_error(
            "[feishu]\napp_id = \"cli_1\"\nallowed_users = [\"alice\"]\n",
            &[secret],
            "config/askbridge.toml: feishu.allowed_users: \"alice\" is not a Feishu open_id (ou_…)",
        );
    }
}
