//! `[slack]`: what the Slack section accepts, from the file and the
//! environment, and the rules it is checked by.

use askbridge_core::render::{Locale, Mode};
use serde::Deserialize;

use super::{
    ChatRules, ChatSection, ConfigError, RawConfig, Secret, Shared, SharedKeys, bot_token,
    chat_section, set,
};

/// `[slack]`: the Slack channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlackConfig {
    /// The bot token (`SLACK_BOT_TOKEN`, `xoxb-…`).
    pub token: Secret,
    /// The Web API base standing in for `https://slack.com/api` (GovSlack,
    /// a proxy, a local fake); askbridge calls `{api_url}/{method}`.
    pub api_url: Option<String>,
    /// How events and interactions arrive.
    pub mode: SlackMode,
    /// `buttons` (default), `text` or `rich`.
    pub render: Mode,
    /// The language of askbridge's own words.
    pub locale: Locale,
    /// Who may answer asks that name no user (`U…` ids); empty: everyone
    /// in the channel.
    pub allowed_users: Vec<String>,
}

/// How Slack events arrive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlackMode {
    /// Socket Mode (default): a WebSocket askbridge opens, no public URL.
    Socket {
        /// The app-level token (`SLACK_APP_TOKEN`, `xapp-…`).
        app_token: Secret,
    },
    /// Slack posts to `/slack/events`, `/slack/interactivity` and
    /// `/slack/commands`, signed.
    Http {
        /// The signing secret (`SLACK_SIGNING_SECRET`).
        signing_secret: Secret,
    },
}

chat_section! {
    /// `[slack]` as written.
    RawSlack {
        /// `mode = "socket"` or `"http"`.
        mode,
    }
}

const SLACK_RULES: ChatRules = ChatRules {
    keys: [
        "slack.api_url",
        "slack.render",
        "slack.locale",
        "slack.allowed_users",
    ],
    locale: Locale::En,
    user: |user| {
        user.len() > 1
            && matches!(user.as_bytes()[0], b'U' | b'W')
            && user.bytes().all(|b| b.is_ascii_alphanumeric())
    },
    not_a_user: "is not a Slack user id (U… or W…)",
};

impl RawConfig {
    /// `[slack]`, when it is on: explicitly, or by `SLACK_BOT_TOKEN`.
    pub(super) fn slack_config(
        &self,
        invalid: &impl Fn(&'static str, String) -> ConfigError,
    ) -> Result<Option<SlackConfig>, ConfigError> {
        let raw = &self.slack;
        let on = ("slack.enabled", "Slack", "SLACK_BOT_TOKEN");
        let Some(token) = bot_token(raw.enabled, &self.slack_token, on, invalid)? else {
            return Ok(None);
        };
        if !token.starts_with("xoxb-") || token.contains(char::is_whitespace) {
            return Err(invalid(
                "slack.token",
                "not a bot token (expected xoxb-…, from OAuth & Permissions)".to_owned(),
            ));
        }
        let token = Secret::new(token);
        let mode = match raw.mode.as_deref().map(|m| m.trim().to_ascii_lowercase()) {
            None => "socket".to_owned(),
            Some(mode) => mode,
        };
        let mode = match mode.as_str() {
            "socket" => match set(&self.slack_app_token) {
                Some(app) if app.starts_with("xapp-") && !app.contains(char::is_whitespace) => {
                    SlackMode::Socket {
                        app_token: Secret::new(app),
                    }
                }
                Some(_) => {
                    return Err(invalid(
                        "slack.app_token",
                        "not an app-level token (expected xapp-…, from Basic Information → App-Level Tokens)".to_owned(),
                    ));
                }
                None => {
                    return Err(invalid(
                        "slack.mode",
                        "Socket Mode needs SLACK_APP_TOKEN (xapp-…, with the connections:write scope); or set mode = \"http\" with SLACK_SIGNING_SECRET".to_owned(),
                    ));
                }
            },
            "http" => match set(&self.slack_signing_secret) {
                Some(signing) => SlackMode::Http {
                    signing_secret: Secret::new(signing),
                },
                None => {
                    return Err(invalid(
                        "slack.mode",
                        "HTTP mode needs SLACK_SIGNING_SECRET (Basic Information → Signing Secret)"
                            .to_owned(),
                    ));
                }
            },
            other => {
                return Err(invalid(
                    "slack.mode",
                    format!("unknown mode {other:?}; expected \"socket\" or \"http\""),
                ));
            }
        };
        let Shared {
            api_url,
            render,
            locale,
            allowed_users,
        } = raw.common(&SLACK_RULES, invalid)?;
        Ok(Some(SlackConfig {
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
    use crate::config::tests::{SLACK_APP_TOKEN, SLACK_TOKEN, check_error, from};

    #[test]
    fn config_slack_is_on_with_a_token_and_off_without() {
        assert_eq!(from("", &[]).expect("valid").slack, None);
        let env = [
            ("SLACK_BOT_TOKEN", SLACK_TOKEN),
            ("SLACK_APP_TOKEN", SLACK_APP_TOKEN),
        ];
        let slack = from("", &env).expect("valid").slack.expect("on");
        assert_eq!(slack.token.expose(), SLACK_TOKEN);
        assert_eq!(
            slack.mode,
            SlackMode::Socket {
                app_token: Secret::new(SLACK_APP_TOKEN)
            }
        );
        assert!(!format!("{slack:?}").contains("abcdef"), "a token leaked");

        let text = "[slack]\napi_url = \"http://127.0.0.1:8083/api\"\nmode = \"http\"\nrender = \"rich\"\nlocale = \"th\"\nallowed_users = [\"U042\"]\n";
        let env = [
            ("SLACK_BOT_TOKEN", SLACK_TOKEN),
            ("SLACK_SIGNING_SECRET", "8f742231b10e8888abcd99yyyzzz85a5"),
        ];
        let slack = from(text, &env).expect("valid").slack.expect("on");
        assert_eq!(slack.api_url.as_deref(), Some("http://127.0.0.1:8083/api"));
        assert_eq!(
            slack.mode,
            SlackMode::Http {
                signing_secret: Secret::new("8f742231b10e8888abcd99yyyzzz85a5")
            }
        );
        assert_eq!((slack.render, slack.locale), (Mode::Rich, Locale::Th));
        assert_eq!(slack.allowed_users, ["U042"]);
    }

    #[test]
    fn config_slack_errors_name_the_key_and_where_it_came_from() {
        let token = ("SLACK_BOT_TOKEN", SLACK_TOKEN);
        check_error(
            "[slack]\nenabled = true\n",
            &[],
            "config/askbridge.toml: slack.enabled: Slack is on but SLACK_BOT_TOKEN is not set",
        );
        check_error(
            "",
            &[("SLACK_BOT_TOKEN", "xapp-1-wrong")],
            "SLACK_BOT_TOKEN: not a bot token (expected xoxb-…, from OAuth & Permissions)",
        );
        check_error(
            "",
            &[token],
            "config/askbridge.toml: slack.mode: Socket Mode needs SLACK_APP_TOKEN (xapp-…, with the connections:write scope); or set mode = \"http\" with SLACK_SIGNING_SECRET",
        );
        check_error(
            "",
            &[token, ("SLACK_APP_TOKEN", "xoxb-1-2")],
            "SLACK_APP_TOKEN: not an app-level token (expected xapp-…, from Basic Information → App-Level Tokens)",
        );
        check_error(
            "[slack]\nmode = \"http\"\n",
            &[token],
            "config/askbridge.toml: slack.mode: HTTP mode needs SLACK_SIGNING_SECRET (Basic Information → Signing Secret)",
        );
        check_error(
            "",
            &[token, ("ASKBRIDGE_SLACK_MODE", "rtm")],
            "ASKBRIDGE_SLACK_MODE: unknown mode \"rtm\"; expected \"socket\" or \"http\"",
        );
        check_error(
            "[slack]\nallowed_users = [\"alice\"]\n",
            &[token, ("SLACK_APP_TOKEN", SLACK_APP_TOKEN)],
            "config/askbridge.toml: slack.allowed_users: \"alice\" is not a Slack user id (U… or W…)",
        );
    }
}
