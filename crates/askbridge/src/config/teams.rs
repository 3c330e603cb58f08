//! `[teams]`: what the Microsoft Teams section accepts, from the file and
//! the environment, and the rules it is checked by.

use askbridge_core::model::Target;
use askbridge_core::render::{Locale, Mode};
use serde::Deserialize;

use super::{
    ChatRules, ChatSection, ConfigError, RawConfig, Secret, Shared, SharedKeys, bot_token,
    http_url, set,
};

/// Where conversations askbridge has not heard from are posted to (the
/// Bot Connector's global endpoint).
pub const DEFAULT_SERVICE_URL: &str = "https://smba.trafficmanager.net/teams/";

/// `[teams]`: the Microsoft Teams channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamsConfig {
    /// The bot's app (client) id in Microsoft Entra ID.
    pub app_id: String,
    /// The client secret (`TEAMS_APP_PASSWORD`).
    pub app_password: Secret,
    /// The tenant of a single-tenant bot; `None`: multi-tenant.
    pub tenant_id: Option<String>,
    /// Where tokens come from (`https://login.microsoftonline.com`).
    pub login_url: String,
    /// The Bot Connector's OpenID metadata, whose keys sign what it posts.
    pub openid_metadata_url: String,
    /// The Bot Connector's URL for conversations askbridge has not heard
    /// from yet (`api_url`; each activity received says its own).
    pub service_url: String,
    /// Take activities without checking their token: for Microsoft's Agents
    /// Playground, which sends none. Never on by default.
    pub insecure_skip_token_check: bool,
    /// `buttons` (default), `text` or `rich`.
    pub render: Mode,
    /// The language of askbridge's own words (default `en`).
    pub locale: Locale,
    /// Who may answer asks that name no user (AAD object ids); empty:
    /// everyone in the conversation.
    pub allowed_users: Vec<String>,
}

/// `[teams]` as written.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTeams {
    /// `enabled = true` (default: on when `TEAMS_APP_PASSWORD` is set).
    pub enabled: Option<bool>,
    /// `app_id = "…"`.
    pub app_id: Option<String>,
    /// `tenant_id = "…"`: a single-tenant bot's tenant.
    pub tenant_id: Option<String>,
    /// `login_url = "https://login.microsoftonline.com"`.
    pub login_url: Option<String>,
    /// `openid_metadata_url = "…"`.
    pub openid_metadata_url: Option<String>,
    /// `api_url = "https://smba.trafficmanager.net/teams/"`.
    pub api_url: Option<String>,
    /// `insecure_skip_token_check = true` (tests only).
    pub insecure_skip_token_check: Option<bool>,
    /// `render = "buttons"`, `"text"` or `"rich"`.
    pub render: Option<String>,
    /// `locale = "en"`, `"zh-CN"` or `"th"`.
    pub locale: Option<String>,
    /// `allowed_users = ["<aad object id>"]`.
    pub allowed_users: Option<Vec<String>>,
}

impl ChatSection for RawTeams {
    fn shared(&self) -> SharedKeys<'_> {
        SharedKeys {
            api_url: self.api_url.as_deref(),
            render: self.render.as_deref(),
            locale: self.locale.as_deref(),
            allowed_users: self.allowed_users.as_deref().unwrap_or_default(),
        }
    }
}

const TEAMS_RULES: ChatRules = ChatRules {
    keys: [
        "teams.api_url",
        "teams.render",
        "teams.locale",
        "teams.allowed_users",
    ],
    locale: Locale::En,
    user: |user| Target::parse(&format!("teams:user/{user}")).is_ok(),
    not_a_user: "is not an AAD object id (a GUID, from the person's profile in Entra ID)",
};

impl RawConfig {
    /// `[teams]`, when it is on: explicitly, or by `TEAMS_APP_PASSWORD`.
    pub(super) fn teams_config(
        &self,
        invalid: &impl Fn(&'static str, String) -> ConfigError,
    ) -> Result<Option<TeamsConfig>, ConfigError> {
        let raw = &self.teams;
        let on = ("teams.enabled", "Teams", "TEAMS_APP_PASSWORD");
        let Some(password) = bot_token(raw.enabled, &self.teams_app_password, on, invalid)? else {
            return Ok(None);
        };
        let app_id = match set(&raw.app_id) {
            Some(id) if !id.contains(char::is_whitespace) => id.to_owned(),
            Some(id) => {
                return Err(invalid(
                    "teams.app_id",
                    format!("{id:?} is not an app id (the bot's Microsoft App ID, a GUID)"),
                ));
            }
            None => {
                return Err(invalid(
                    "teams.app_id",
                    "Teams is on but the bot's app id is not set (app_id = \"…\" under [teams], or TEAMS_APP_ID)".to_owned(),
                ));
            }
        };
        let url = |key: &'static str, value: &Option<String>, default: &str| match set(value) {
            Some(url) => http_url(url).map_err(|message| invalid(key, message)),
            None => Ok(default.to_owned()),
        };
        let login_url = url(
            "teams.login_url",
            &raw.login_url,
            askbridge_teams::run::LOGIN_URL,
        )?;
        let openid_metadata_url = url(
            "teams.openid_metadata_url",
            &raw.openid_metadata_url,
            askbridge_teams::auth::BOT_FRAMEWORK_METADATA,
        )?;
        let Shared {
            api_url,
            render,
            locale,
            allowed_users,
        } = raw.common(&TEAMS_RULES, invalid)?;
        Ok(Some(TeamsConfig {
            app_id,
            app_password: Secret::new(password),
            tenant_id: set(&raw.tenant_id).map(str::to_owned),
            login_url,
            openid_metadata_url,
            service_url: api_url.unwrap_or_else(|| DEFAULT_SERVICE_URL.to_owned()),
            insecure_skip_token_check: raw.insecure_skip_token_check.unwrap_or(false),
            render,
            locale,
            // AAD object ids are GUIDs, compared in lower case.
            allowed_users: allowed_users
                .iter()
                .map(|user| user.to_ascii_lowercase())
                .collect(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::tests::from;

    const ALICE: &str = "9f1c1a52-6d0b-4c7e-8e5b-3f2a1b0c9d8e";

    /// Environment variables for `from`.
    type Env<'a> = &'a [(&'a str, &'a str)];

    #[test]
    fn config_teams_is_on_with_its_password_and_reads_its_section() {
        assert_eq!(from("", &[]).expect("valid").teams, None);
        let text = "[teams]\napp_id = \"bot-app\"\n";
        let teams = from(text, &[("TEAMS_APP_PASSWORD", "pa55")])
            .expect("valid")
            .teams
            .expect("on");
        assert_eq!(teams.app_id, "bot-app");
        assert_eq!(teams.app_password, Secret::new("pa55"));
        assert_eq!(teams.tenant_id, None, "multi-tenant");
        assert_eq!(teams.login_url, askbridge_teams::run::LOGIN_URL);
        assert_eq!(
            teams.openid_metadata_url,
            askbridge_teams::auth::BOT_FRAMEWORK_METADATA
        );
        assert_eq!(teams.service_url, DEFAULT_SERVICE_URL);
        assert!(!teams.insecure_skip_token_check, "never by default");
        assert_eq!((teams.render, teams.locale), (Mode::Buttons, Locale::En));
        assert!(!format!("{teams:?}").contains("pa55"), "a secret leaked");

        let text = format!(
            "{text}tenant_id = \"contoso\"\nlogin_url = \"http://127.0.0.1:9/\"\n\
             openid_metadata_url = \"http://127.0.0.1:9/openid\"\napi_url = \"http://127.0.0.1:9/connector\"\n\
             insecure_skip_token_check = true\nrender = \"rich\"\nlocale = \"th\"\nallowed_users = [\"{}\"]\n",
            ALICE.to_uppercase()
        );
        let teams = from(&text, &[("TEAMS_APP_PASSWORD", "pa55")])
            .expect("valid")
            .teams
            .expect("on");
        assert_eq!(teams.tenant_id.as_deref(), Some("contoso"));
        assert_eq!(teams.service_url, "http://127.0.0.1:9/connector");
        assert!(teams.insecure_skip_token_check);
        assert_eq!((teams.render, teams.locale), (Mode::Rich, Locale::Th));
        assert_eq!(teams.allowed_users, [ALICE]);
    }

    #[test]
    fn config_teams_errors_name_the_key() {
        let password = ("TEAMS_APP_PASSWORD", "pa55");
        // (file, environment, the start of the error)
        let table: [(&str, Env<'_>, &str); 4] = [
            (
                "[teams]\nenabled = true\napp_id = \"bot\"\n",
                &[],
                "config/askbridge.toml: teams.enabled: Teams is on but TEAMS_APP_PASSWORD is not set",
            ),
            (
                "",
                &[password],
                "config/askbridge.toml: teams.app_id: Teams is on but the bot's app id is not set",
            ),
            (
                "[teams]\napp_id = \"bot\"\nallowed_users = [\"alice\"]\n",
                &[password],
                "config/askbridge.toml: teams.allowed_users: \"alice\" is not an AAD object id",
            ),
            (
                "[teams]\napp_id = \"bot\"\nlogin_url = \"ftp://x\"\n",
                &[password],
                "config/askbridge.toml: teams.login_url: ",
            ),
        ];
        for (text, env, expect) in table {
            let refused = from(text, env).expect_err(expect);
            assert!(refused.starts_with(expect), "{refused}");
        }
    }

    #[test]
    fn config_teams_skipping_the_token_check_refuses_to_listen_beyond_loopback() {
        let password = ("TEAMS_APP_PASSWORD", "pa55");
        let skip = "[teams]\napp_id = \"bot\"\ninsecure_skip_token_check = true\n";
        // Even with an API token: /teams/messages takes no token of it.
        let text = format!("listen = \"0.0.0.0:8790\"\napi_token = \"t0ken\"\n{skip}");
        let refused = from(&text, &[password]).expect_err("exposed");
        assert!(
            refused.starts_with(
                "config/askbridge.toml: teams.insecure_skip_token_check: refusing to listen on 0.0.0.0:8790 \
                 with the Teams token check off"
            ),
            "{refused}"
        );
        let env = [
            password,
            ("TEAMS_APP_ID", "bot"),
            ("ASKBRIDGE_TEAMS_INSECURE_SKIP_TOKEN_CHECK", "true"),
            ("ASKBRIDGE_LISTEN", "192.0.2.7:8790"),
            ("ASKBRIDGE_API_TOKEN", "t0ken"),
        ];
        let refused = from("", &env).expect_err("exposed");
        assert!(
            refused.starts_with(
                "ASKBRIDGE_TEAMS_INSECURE_SKIP_TOKEN_CHECK: refusing to listen on 192.0.2.7:8790"
            ),
            "{refused}"
        );
        // On loopback, or with the check on, the same is taken.
        for listen in ["127.0.0.1:8790", "[::1]:8790"] {
            let text = format!("listen = \"{listen}\"\n{skip}");
            assert!(from(&text, &[password]).is_ok(), "{listen}");
        }
        let text = "listen = \"0.0.0.0:8790\"\napi_token = \"t0ken\"\n[teams]\napp_id = \"bot\"\n";
        assert!(from(text, &[password]).is_ok());
    }
}
