//! `[discord]`: what the Discord section accepts, from the file and
//! the environment, and the rules it is checked by.

use askbridge_core::render::{Locale, Mode};
use serde::Deserialize;

use super::{
    ChatRules, ChatSection, ConfigError, RawConfig, Secret, Shared, SharedKeys, bot_token,
    chat_section,
};

/// `[discord]`: the Discord channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscordConfig {
    /// The bot token (`DISCORD_BOT_TOKEN`).
    pub token: Secret,
    /// A REST proxy (or a local fake) standing in for `https://discord.com`;
    /// askbridge calls `{api_url}/api/v10/…`. Discord itself when `None`.
    pub api_url: Option<String>,
    /// The application's public key (`DISCORD_PUBLIC_KEY`, hex): when set,
    /// interactions are also taken over HTTP at `/discord/interactions`.
    pub public_key: Option<String>,
    /// `buttons` (default), `text` or `rich`.
    pub render: Mode,
    /// The language of askbridge's own words.
    pub locale: Locale,
    /// Who may answer asks that name no user (user ids or role ids);
    /// empty: everyone in the channel.
    pub allowed_users: Vec<String>,
}

chat_section! {
    /// `[discord]` as written.
    RawDiscord {}
}

const DISCORD_RULES: ChatRules = ChatRules {
    keys: [
        "discord.api_url",
        "discord.render",
        "discord.locale",
        "discord.allowed_users",
    ],
    locale: Locale::En,
    user: |user| !user.is_empty() && user.bytes().all(|b| b.is_ascii_digit()),
    not_a_user: "is neither a user id nor a role id (digits)",
};

impl RawConfig {
    /// `[discord]`, when it is on: explicitly, or by `DISCORD_BOT_TOKEN`.
    pub(super) fn discord_config(
        &self,
        invalid: &impl Fn(&'static str, String) -> ConfigError,
    ) -> Result<Option<DiscordConfig>, ConfigError> {
        let raw = &self.discord;
        let on = ("discord.enabled", "Discord", "DISCORD_BOT_TOKEN");
        let Some(token) = bot_token(raw.enabled, &self.discord_token, on, invalid)? else {
            return Ok(None);
        };
        if token.contains(char::is_whitespace) || token.contains(char::is_control) {
            return Err(invalid(
                "discord.token",
                "not a bot token: give the token alone, as the developer portal shows it (without \"Bot \")".to_owned(),
            ));
        }
        let token = Secret::new(token);
        let public_key = match self.discord_public_key.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(key) if key.len() == 64 && key.bytes().all(|b| b.is_ascii_hexdigit()) => {
                Some(key.to_ascii_lowercase())
            }
            Some(_) => {
                return Err(invalid(
                    "discord.public_key",
                    "not an application public key (64 hex digits, as the developer portal shows it)".to_owned(),
                ));
            }
        };
        let Shared {
            api_url,
            render,
            locale,
            allowed_users,
        } = raw.common(&DISCORD_RULES, invalid)?;
        Ok(Some(DiscordConfig {
            token,
            api_url,
            public_key,
            render,
            locale,
            allowed_users,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::tests::{DISCORD_TOKEN, check_error, from};

    const PUBLIC_KEY: &str = "e7a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f";

    #[test]
    fn config_discord_is_on_with_a_token_and_off_without() {
        assert_eq!(from("", &[]).expect("valid").discord, None);
        let discord = from("", &[("DISCORD_BOT_TOKEN", DISCORD_TOKEN)])
            .expect("valid")
            .discord
            .expect("on");
        assert_eq!(discord.token.expose(), DISCORD_TOKEN);
        assert_eq!(
            (discord.render, discord.locale),
            (Mode::Buttons, Locale::En)
        );
        assert_eq!((discord.api_url, discord.public_key), (None, None));
        assert!(
            !format!("{:?}", from("", &[("DISCORD_BOT_TOKEN", DISCORD_TOKEN)]))
                .contains("abcdefgh"),
            "the token leaked"
        );

        let text = "[discord]\napi_url = \"http://127.0.0.1:8082\"\nrender = \"rich\"\nlocale = \"th\"\nallowed_users = [\"42\", \"900\"]\n";
        let env = [
            ("DISCORD_BOT_TOKEN", DISCORD_TOKEN),
            ("DISCORD_PUBLIC_KEY", PUBLIC_KEY),
            ("ASKBRIDGE_DISCORD_LOCALE", "zh-CN"),
        ];
        let discord = from(text, &env).expect("valid").discord.expect("on");
        assert_eq!(discord.api_url.as_deref(), Some("http://127.0.0.1:8082"));
        assert_eq!(discord.public_key.as_deref(), Some(PUBLIC_KEY));
        assert_eq!((discord.render, discord.locale), (Mode::Rich, Locale::ZhCn));
        assert_eq!(discord.allowed_users, ["42", "900"]);
        let off = from(
            "[discord]\nenabled = false\n",
            &[("DISCORD_BOT_TOKEN", DISCORD_TOKEN)],
        );
        assert_eq!(off.expect("valid").discord, None);
    }

    #[test]
    fn config_discord_errors_name_the_key_and_where_it_came_from() {
        let token = [("DISCORD_BOT_TOKEN", DISCORD_TOKEN)];
        check_error(
            "[discord]\nenabled = true\n",
            &[],
            "config/askbridge.toml: discord.enabled: Discord is on but DISCORD_BOT_TOKEN is not set",
        );
        check_error(
            "",
            &[("DISCORD_BOT_TOKEN", "Bot abc.def")],
            "DISCORD_BOT_TOKEN: not a bot token: give the token alone, as the developer portal shows it (without \"Bot \")",
        );
        check_error(
            "",
            &[token[0], ("DISCORD_PUBLIC_KEY", "xyz")],
            "DISCORD_PUBLIC_KEY: not an application public key (64 hex digits, as the developer portal shows it)",
        );
        check_error(
            "",
            &[token[0], ("ASKBRIDGE_DISCORD_RENDER", "fancy")],
            "ASKBRIDGE_DISCORD_RENDER: unknown render mode \"fancy\"; expected \"buttons\", \"text\" or \"rich\"",
        );
        check_error(
            "[discord]\napi_url = \"discord.com\"\n",
            &token,
            "config/askbridge.toml: discord.api_url: \"discord.com\" is not a URL: relative URL without a base",
        );
        check_error(
            "[discord]\nallowed_users = [\"@alice\"]\n",
            &token,
            "config/askbridge.toml: discord.allowed_users: \"@alice\" is neither a user id nor a role id (digits)",
        );
        check_error(
            "[discord]\nbot_token = \"x\"\n",
            &token,
            "config/askbridge.toml: discord.bot_token: unknown field `bot_token`, expected one of `enabled`, `api_url`, `render`, `locale`, `allowed_users` (line 2, column 1)",
        );
    }
}
