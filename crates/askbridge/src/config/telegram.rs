//! `[telegram]`: what the Telegram section accepts, from the file and
//! the environment, and the rules it is checked by.

use askbridge_core::render::{Locale, Mode};
use serde::Deserialize;

use super::{
    ChatRules, ChatSection, ConfigError, RawConfig, Secret, Shared, SharedKeys, bot_token,
    chat_section, http_url,
};

/// `[telegram]`: the Telegram channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TelegramConfig {
    /// The bot token (`TELEGRAM_BOT_TOKEN`).
    pub token: Secret,
    /// A self-hosted Bot API server; Telegram's own when `None`.
    pub api_url: Option<String>,
    /// How updates arrive.
    pub mode: TelegramMode,
    /// `buttons` (default), `text` or `rich`.
    pub render: Mode,
    /// The language of askbridge's own words.
    pub locale: Locale,
    /// Who may answer asks that name no user (ids or `@usernames`);
    /// empty: everyone in the chat.
    pub allowed_users: Vec<String>,
}

/// How Telegram updates arrive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TelegramMode {
    /// `getUpdates` long polling (default).
    Polling,
    /// Telegram posts to `/telegram/webhook` with the secret header.
    Webhook {
        /// The public URL registered with Telegram; `None`:
        /// `http://<listen>/telegram/webhook` (a local Bot API server).
        url: Option<String>,
        /// The secret (`TELEGRAM_WEBHOOK_SECRET`).
        secret: Secret,
    },
}

chat_section! {
    /// `[telegram]` as written.
    RawTelegram {
        /// `mode = "polling"` or `"webhook"`.
        mode,
        /// `webhook_url = "https://bridge.example.com/telegram/webhook"`.
        webhook_url,
    }
}

const TELEGRAM_RULES: ChatRules = ChatRules {
    keys: [
        "telegram.api_url",
        "telegram.render",
        "telegram.locale",
        "telegram.allowed_users",
    ],
    locale: Locale::En,
    user: |user| {
        let id = !user.is_empty() && user.bytes().all(|b| b.is_ascii_digit());
        let name = user.strip_prefix('@').is_some_and(|name| {
            !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        });
        id || name
    },
    not_a_user: "is neither a user id (digits) nor an @username",
};

impl RawConfig {
    /// `[telegram]`, when it is on: explicitly, or by `TELEGRAM_BOT_TOKEN`.
    pub(super) fn telegram_config(
        &self,
        invalid: &impl Fn(&'static str, String) -> ConfigError,
    ) -> Result<Option<TelegramConfig>, ConfigError> {
        let raw = &self.telegram;
        let on = ("telegram.enabled", "Telegram", "TELEGRAM_BOT_TOKEN");
        let Some(token) = bot_token(raw.enabled, &self.telegram_token, on, invalid)? else {
            return Ok(None);
        };
        let token = match token.split_once(':') {
            Some((id, rest))
                if !id.is_empty()
                    && id.bytes().all(|b| b.is_ascii_digit())
                    && !rest.is_empty()
                    && !rest.contains(char::is_whitespace) =>
            {
                Secret::new(token)
            }
            _ => {
                return Err(invalid(
                    "telegram.token",
                    "not a bot token (expected 123456:ABC…, as BotFather gives it)".to_owned(),
                ));
            }
        };
        let mode = match raw.mode.as_deref().map(|m| m.trim().to_ascii_lowercase()) {
            None => TelegramMode::Polling,
            Some(mode) if mode == "polling" => TelegramMode::Polling,
            Some(mode) if mode == "webhook" => {
                let url = raw
                    .webhook_url
                    .as_deref()
                    .map(|url| {
                        http_url(url).map_err(|message| invalid("telegram.webhook_url", message))
                    })
                    .transpose()?;
                let secret = self.telegram_webhook_secret.as_deref().unwrap_or("").trim();
                let valid = (1..=256).contains(&secret.len())
                    && secret
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
                if !valid {
                    return Err(invalid(
                        "telegram.mode",
                        "webhook mode needs TELEGRAM_WEBHOOK_SECRET: 1 to 256 characters of A-Z, a-z, 0-9, _ and -".to_owned(),
                    ));
                }
                TelegramMode::Webhook {
                    url,
                    secret: Secret::new(secret),
                }
            }
            Some(other) => {
                return Err(invalid(
                    "telegram.mode",
                    format!("unknown mode {other:?}; expected \"polling\" or \"webhook\""),
                ));
            }
        };
        let Shared {
            api_url,
            render,
            locale,
            allowed_users,
        } = raw.common(&TELEGRAM_RULES, invalid)?;
        Ok(Some(TelegramConfig {
            token,
            api_url,
            mode,
            render,
            locale,
            allowed_users,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::tests::{BOT_TOKEN, check_error, from};

    #[test]
    fn config_telegram_is_on_with_a_token_and_off_without() {
        assert_eq!(from("", &[]).expect("valid").telegram, None);
        let config = from("", &[("TELEGRAM_BOT_TOKEN", BOT_TOKEN)]).expect("valid");
        let telegram = config.telegram.expect("on");
        assert_eq!(telegram.token.expose(), BOT_TOKEN);
        assert_eq!(telegram.mode, TelegramMode::Polling);
        assert_eq!(telegram.render, Mode::Buttons);
        assert_eq!(telegram.locale, Locale::En);
        assert!(
            !format!("{telegram:?}").contains("ABC-DEF"),
            "the token leaked"
        );

        let text = "[telegram]\napi_url = \"http://127.0.0.1:8081\"\nmode = \"webhook\"\nrender = \"rich\"\nlocale = \"zh-CN\"\nallowed_users = [\"42\", \"@alice\"]\n";
        let env = [
            ("TELEGRAM_BOT_TOKEN", BOT_TOKEN),
            ("TELEGRAM_WEBHOOK_SECRET", "s3cret"),
        ];
        let telegram = from(text, &env).expect("valid").telegram.expect("on");
        assert_eq!(telegram.api_url.as_deref(), Some("http://127.0.0.1:8081"));
        assert_eq!(
            telegram.mode,
            TelegramMode::Webhook {
                url: None,
                secret: Secret::new("s3cret")
            }
        );
        assert_eq!(
            (telegram.render, telegram.locale),
            (Mode::Rich, Locale::ZhCn)
        );
        assert_eq!(telegram.allowed_users, ["42", "@alice"]);
        let off = from(
            "[telegram]\nenabled = false\n",
            &[("TELEGRAM_BOT_TOKEN", BOT_TOKEN)],
        );
        assert_eq!(off.expect("valid").telegram, None);
    }

    #[test]
    fn config_telegram_errors_name_the_key_and_where_it_came_from() {
        let token = [("TELEGRAM_BOT_TOKEN", BOT_TOKEN)];
        check_error(
            "[telegram]\nenabled = true\n",
            &[],
            "config/askbridge.toml: telegram.enabled: Telegram is on but TELEGRAM_BOT_TOKEN is not set",
        );
        check_error(
            "",
            &[("TELEGRAM_BOT_TOKEN", "not a token")],
            "TELEGRAM_BOT_TOKEN: not a bot token (expected 123456:ABC…, as BotFather gives it)",
        );
        check_error(
            "[telegram]\nmode = \"webhook\"\n",
            &token,
            "config/askbridge.toml: telegram.mode: webhook mode needs TELEGRAM_WEBHOOK_SECRET: 1 to 256 characters of A-Z, a-z, 0-9, _ and -",
        );
        check_error(
            "",
            &[token[0], ("ASKBRIDGE_TELEGRAM_RENDER", "fancy")],
            "ASKBRIDGE_TELEGRAM_RENDER: unknown render mode \"fancy\"; expected \"buttons\", \"text\" or \"rich\"",
        );
        check_error(
            "[telegram]\napi_url = \"ftp://x\"\n",
            &token,
            "config/askbridge.toml: telegram.api_url: \"ftp://x\" is not an http:// or https:// URL",
        );
        check_error(
            "[telegram]\nallowed_users = [\"alice\"]\n",
            &token,
            "config/askbridge.toml: telegram.allowed_users: \"alice\" is neither a user id (digits) nor an @username",
        );
        check_error(
            "[telegram]\nlocale = \"fr\"\n",
            &token,
            "config/askbridge.toml: telegram.locale: unsupported locale \"fr\"; expected en, zh-CN or th",
        );
    }
}
