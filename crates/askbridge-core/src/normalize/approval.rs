//! Where an approval may go: every place of an approval
//! ([`Ask::approval`]) must name the one person who may answer it, in a way the
//! platform vouches for. Checked when the ask is created, after the
//! configured defaults filled in what it left unset; the lifecycle then
//! lets nobody else answer it ([`Ask::may_answer`]).

use super::Problem;
use crate::model::{Ask, AskDefaults, Place, Target, Verified};

/// The ask as it is created: what it left unset taken from `defaults`
/// ([`Ask::with_defaults`]), and, for an approval, refused with a problem
/// per place that does not name its person ([`approver_problem`]). An
/// approval goes to the web page only when it says so (`"to": "web"`),
/// never as the configured default target.
pub fn with_defaults(ask: Ask, defaults: &AskDefaults) -> Result<Ask, Vec<Problem>> {
    let default_target = ask.target.is_none();
    let ask = ask.with_defaults(defaults);
    if !ask.approval {
        return Ok(ask);
    }
    let several = !ask.also.is_empty();
    let mut problems = Vec::new();
    for (index, target) in ask.target.iter().chain(&ask.also).enumerate() {
        let path = if several {
            format!("to[{index}]")
        } else {
            "to".to_owned()
        };
        if default_target && matches!(target.place, Place::Web { .. }) {
            problems.push(Problem::new(
                path,
                "an approval goes to the web page only when the ask says so (\"to\": \"web\"), \
                 never as the configured default target",
            ));
        } else if let Some(problem) = approver_problem(target, &path, defaults.verified) {
            problems.push(problem);
        }
    }
    for (index, step) in ask.escalate.iter().enumerate() {
        let path = format!("escalate[{index}].to");
        problems.extend(approver_problem(&step.to, &path, defaults.verified));
    }
    if problems.is_empty() {
        Ok(ask)
    } else {
        Err(problems)
    }
}

/// Why an approval may not be posted to `target` (at `path`), if it may
/// not: the place names nobody, or it is a channel whose people the
/// daemon cannot tell apart with its settings (`verified`). The message
/// says how to name the person.
pub fn approver_problem(target: &Target, path: &str, verified: Verified) -> Option<Problem> {
    let message = match &target.place {
        Place::Web { .. } if !verified.web => {
            "the web page may answer an approval only when the daemon has an api_token: \
             without one, any process on this machine — the agent itself included — could \
             approve"
                .to_owned()
        }
        Place::Web { .. } => return None,
        Place::Email { .. } if !verified.email => {
            "email answers an approval only with [email] require_authentication = true: \
             without it, anyone can write a From: line"
                .to_owned()
        }
        _ if target.person().is_some() => return None,
        place => format!(
            "{place} names no person: only the one person a place names may answer an \
             approval. Name them: {}",
            how_to_name(place)
        ),
    };
    Some(Problem::new(path, message))
}

/// How to name the person at `place`: in the group, or their direct chat.
fn how_to_name(place: &Place) -> String {
    let direct = match place {
        Place::Telegram { .. } => "telegram:USER_ID (their private chat)",
        Place::DiscordChannel { .. } | Place::DiscordUser { .. } => "discord:user/USER_ID",
        Place::Slack { .. } | Place::SlackUser { .. } => "slack:user/U…",
        Place::Feishu { .. } | Place::FeishuUser { .. } => "feishu:user/OPEN_ID",
        Place::MatrixRoom { .. } | Place::MatrixUser { .. } => "matrix:user/@user:server",
        Place::Teams { .. } | Place::TeamsUser { .. } => "teams:user/AAD_OBJECT_ID",
        Place::Email { .. } | Place::Web { .. } => return place.to_string(),
    };
    let user = match place {
        Place::Slack { .. } => "U…",
        Place::Feishu { .. } => "OPEN_ID",
        Place::MatrixRoom { .. } => "@user:server",
        Place::Teams { .. } => "AAD_OBJECT_ID",
        _ => "USER_ID",
    };
    format!("{place}@{user}, or {direct}")
}
