//! Approval rules: what a person decided once for every call like this
//! one, so the hook need not ask again.
//!
//! A [`Rule`] is a [`RulePattern`] (what it matches), an [`Effect`]
//! (`allow`, `deny` with words for the agent, or `ask`: always asked in
//! the chat), a [`Scope`] (a host or every host, a project or every
//! project, a session or every session) and an optional expiry. A
//! [`Ruleset`] indexes rules by tool and [decides](Ruleset::decide) a hook
//! event against them; [`propose`] writes the narrowest sensible rule for a
//! call, for the chat's "Always allow" button. Storage (who made a rule,
//! when, how often it fired) is not here, and neither is the clock: `now`
//! is an argument.
//!
//! # Syntax
//!
//! Claude Code's permission-rule syntax, which users know, followed where
//! its documentation speaks:
//!
//! | Rule | Matches |
//! |---|---|
//! | `Bash` or `Bash(*)` | any shell command |
//! | `Bash(npm test)` | exactly the command `npm test` (whitespace runs do not matter, quotes are removed as the shell does) |
//! | `Bash(npm run test:*)`, `Bash(npm run test *)` | a command whose words start with `npm run test`: `npm run test`, `npm run test -- --watch`, but not `npm run testing` |
//! | `Edit(src/**)` | a file changed under `src/` of the project: any file-changing tool (`Write` too) |
//! | `Write(docs/*.md)`, `Read(./docs/*.md)` | a whole-file write, a read |
//! | `Edit(//etc/hosts)`, `Read(~/.aws/**)` | an absolute path, a path under the home directory |
//! | `WebFetch` / `WebFetch(domain:docs.rs)` / `WebFetch(domain:*.docs.rs)` | any fetch / a fetch of `docs.rs` itself / of any subdomain of `docs.rs` (not `docs.rs` itself) |
//! | `mcp__github__create_issue` | that MCP tool |
//! | `mcp__github`, `mcp__github__*` | every tool of the `github` MCP server |
//! | `WebSearch`, any other tool name | any call of that tool |
//!
//! Where Claude Code's documentation is silent or askbridge chose to be
//! stricter, the choice is the conservative one:
//!
//! - A command pattern is matched word by word, so `Bash(npm test:*)`
//!   never matches `npm testing`, and `Bash(curl http://x/:*)` matches
//!   `curl http://x/` followed by more words, not `curl http://x/y`.
//! - `*` is a wildcard in a command only at the end (`:*` or ` *`); a
//!   `*` elsewhere (`Bash(git * main)`, `Bash(ls*)`) is refused rather than
//!   guessed at. In paths, `*` matches within one directory, `**` across
//!   any, `?` one character; `[…]` classes are refused.
//! - Paths follow gitignore: a pattern with no `/` but a trailing one
//!   (`Read(*.env)`) matches at any depth; one with a `/` (`src/*.rs`,
//!   `./x`, `/x`) is anchored at the project directory. The project
//!   directory is the rule's project when it has one, else the directory
//!   the host reports. A trailing `/` means everything under it. `..` is
//!   refused in a pattern (write `//` for a path outside the project); a
//!   call's path is resolved lexically (`src/../../x` leaves the
//!   project), and symbolic links are not followed.
//! - `WebFetch` takes only `domain:`; the host is compared without case,
//!   port or user name (`https://docs.rs@evil.example/` is `evil.example`).
//!
//! # Other hosts
//!
//! The same rules match every host's calls; a host's tool counts as the
//! Claude Code tool it does the work of:
//!
//! | Host's tool | Counts as | Its argument |
//! |---|---|---|
//! | `Bash` (Claude Code), `Shell` (Cursor), `exec_command`, `shell` (Codex), `bash`, `powershell` (Copilot CLI) | `Bash` | `command` or `cmd`; an argument list is taken as the command's words, and `bash -lc '…'` as the script |
//! | `Edit`, `MultiEdit`, `NotebookEdit` (Claude Code), `apply_patch` (Codex: every file of the patch), `edit`, `str_replace_editor` (Copilot CLI), `Edit`, `StrReplace`, `Delete`, `edit_file`, `search_replace`, `delete_file` (Cursor) | `Edit` | `file_path`, `path`, `notebook_path` or `target_file` |
//! | `Write` (Claude Code, Cursor), `create` (Copilot CLI) | `Write` (and so `Edit`) | the same |
//! | `Read`, `NotebookRead` (Claude Code), `view` (Copilot CLI) | `Read` | the same |
//! | `WebFetch`, `web_fetch` | `WebFetch` | `url` |
//! | `mcp__server__tool` | that MCP tool | |
//!
//! Any other tool is matched by its own name only (a rule `create_issue`
//! matches Cursor's bare MCP tool name of that).
//!
//! # Compound commands
//!
//! A command line is read into its simple commands (split at `;`, `&&`,
//! `||`, `|`, `|&`, `&`, newlines and parentheses; the commands inside
//! `$(…)`, backticks and `<(…)` count as commands of their own). Each is
//! decided on its own and the results combine: **any** part denied denies
//! the call, then any part asked or matched by no rule leaves the call to
//! the person, and only when **every** part is allowed is the call
//! allowed. An `allow` command rule vouches only for a plain part: one
//! with a substitution, a `${…}` expansion, a redirection (other than to
//! `/dev/null` or another descriptor), a heredoc or a subshell is allowed
//! by nothing but the whole tool (`Bash`). A `deny` or `ask` rule matches
//! a part wherever its words begin in the part (`Bash(rm -rf:*)` matches
//! `sudo rm -rf /` and `xargs rm -rf`), so wrappers do not slip past it;
//! it may also match a harmless `echo rm -rf`. A line that cannot be read
//! (an unterminated quote) is allowed only by `Bash`, and `deny` and `ask`
//! rules are matched against its blank-separated words. Deny rules are a
//! convenience, not a sandbox: `$CMD`, `eval "$(…)"` or a script file can
//! always run what no rule names.
//!
//! # Which rule decides
//!
//! Among the rules that match a part (and are in scope and not expired)
//! the most specific pattern decides: an exact command, path, domain or
//! MCP tool, then a prefix by its length in words (a glob by its literal
//! characters, a `*.` domain by its length, a whole MCP server), then a
//! whole tool. At equal specificity `deny` beats `ask` beats `allow`,
//! whatever the scopes: a rule made for one session does not undo an
//! equally specific `deny` made for every session (to make an exception,
//! write a more specific rule). Only among rules equal in both does the
//! narrower scope (session, then project, then host) decide which rule is
//! reported. This differs from Claude Code's settings, where any matching
//! deny wins however specific an allow is: askbridge's rules are made one
//! by one in a chat, and "deny `git push`, but allow `git push origin
//! main`" is what a person means by making both.

mod shell;

use std::collections::HashMap;
use std::fmt;

use serde_json::{Map, Value};

use crate::hooks::{HookEvent, Host};
use crate::model::Timestamp;

/// What a rule does to the calls it matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Run it without asking.
    Allow,
    /// Refuse it; tell the agent these words.
    Deny(String),
    /// Always ask in the chat, even where an `allow` rule matches.
    Ask,
}

impl Effect {
    /// `deny` over `ask` over `allow` at equal specificity.
    fn rank(&self) -> u8 {
        match self {
            Effect::Allow => 0,
            Effect::Ask => 1,
            Effect::Deny(_) => 2,
        }
    }
}

/// Where a rule applies: `None` for every host, project or session.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Scope {
    pub host: Option<Host>,
    /// The project directory, as the host reports it (`cwd`): the rule
    /// applies there and in its subdirectories, and relative path
    /// patterns are relative to it.
    pub project: Option<String>,
    /// The agent session.
    pub session: Option<String>,
}

impl Scope {
    /// Every host, project and session.
    pub fn everywhere() -> Scope {
        Scope::default()
    }

    /// Whether it covers `event`, whose directory is `cwd` (normalised),
    /// given its own project directory normalised as `project`.
    fn covers(
        &self,
        event: &HookEvent,
        project: Option<&[String]>,
        cwd: Option<&[String]>,
    ) -> bool {
        self.host.is_none_or(|host| host == event.host)
            && self
                .session
                .as_ref()
                .is_none_or(|session| *session == event.session_id)
            && (self.project.is_none()
                || matches!((cwd, project), (Some(cwd), Some(project)) if cwd.starts_with(project)))
    }

    /// Narrower is larger: a session, then a project, then a host.
    fn narrowness(&self) -> u8 {
        u8::from(self.session.is_some()) * 4
            + u8::from(self.project.is_some()) * 2
            + u8::from(self.host.is_some())
    }
}

/// One approval rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub pattern: RulePattern,
    pub effect: Effect,
    pub scope: Scope,
    /// When it stops matching; `None`: never.
    pub expires_at: Option<Timestamp>,
}

impl Rule {
    /// A rule that never expires, its pattern read from `pattern`.
    pub fn parse(pattern: &str, effect: Effect, scope: Scope) -> Result<Rule, RuleError> {
        Ok(Rule {
            pattern: RulePattern::parse(pattern)?,
            effect,
            scope,
            expires_at: None,
        })
    }

    /// Whether it still matches at `now`.
    pub fn is_live(&self, now: Timestamp) -> bool {
        self.expires_at.is_none_or(|expires| now < expires)
    }
}

/// A rule pattern that could not be read. Positions are 0-based character
/// offsets into the pattern as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    /// Nothing but blanks.
    #[error("empty rule")]
    Empty,
    /// A character a tool name cannot have.
    #[error("unexpected `{found}` at {at}: a tool name has only letters, digits, `_` and `-`")]
    ToolName { at: usize, found: char },
    /// An opening parenthesis never closed.
    #[error("missing ')' at {at}")]
    MissingParen { at: usize },
    /// Text after the closing parenthesis.
    #[error("unexpected `{found}` at {at} after the closing ')'")]
    Trailing { at: usize, found: char },
    /// `Tool()`.
    #[error("empty parentheses at {at}: write `{tool}` alone for every call of the tool")]
    EmptyParens { at: usize, tool: String },
    /// An argument for a tool that takes none.
    #[error(
        "`{tool}` takes no argument (at {at}): only Bash, Edit, Write, Read and WebFetch rules do"
    )]
    NoArgument { at: usize, tool: String },
    /// A `WebFetch(…)` argument that is not `domain:…`.
    #[error("WebFetch takes `domain:<host>` (at {at})")]
    NotDomain { at: usize },
    /// A domain with a character no host name has.
    #[error("unexpected `{found}` at {at} in a domain")]
    Domain { at: usize, found: char },
    /// A wildcard where this syntax has none.
    #[error("`{found}` at {at} is not a wildcard here: {hint}")]
    Wildcard {
        at: usize,
        found: char,
        hint: &'static str,
    },
    /// A command pattern that is not one plain command.
    #[error("{problem} at {at}: a command rule is one plain command")]
    Command { at: usize, problem: &'static str },
    /// `..` in a path pattern.
    #[error("`..` at {at}: write `//` and the absolute path for a path outside the project")]
    ParentDir { at: usize },
    /// `~user/…`.
    #[error("`~` at {at}: only `~/` (your home directory) is understood")]
    Tilde { at: usize },
    /// An `mcp__` rule without a server or with a bad tool part.
    #[error("{problem} at {at}")]
    Mcp { at: usize, problem: &'static str },
}

/// What a rule matches, in Claude Code's permission-rule syntax.
/// [`fmt::Display`] writes it back in canonical form (`Bash(npm test *)`
/// reads back as `Bash(npm test:*)`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RulePattern {
    kind: Kind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    /// Any call of the tool (`Bash`, `WebSearch`).
    Tool(String),
    /// `Bash(words)` or `Bash(words:*)`.
    Command { words: Vec<String>, prefix: bool },
    /// `Edit(…)`, `Write(…)`, `Read(…)`.
    Path { access: Access, glob: PathGlob },
    /// `WebFetch(domain:…)`.
    Domain(Domain),
    /// `mcp__server__tool`, or every tool of the server.
    Mcp {
        server: String,
        tool: Option<String>,
    },
}

/// What a file call does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Access {
    Read,
    /// Changes a file in place (or deletes it).
    Edit,
    /// Writes a whole file.
    Write,
}

impl Access {
    fn tool(self) -> &'static str {
        match self {
            Access::Read => "Read",
            Access::Edit => "Edit",
            Access::Write => "Write",
        }
    }

    /// Whether a rule for `self` covers a call that does `call`: `Edit`
    /// covers every change.
    fn covers(self, call: Access) -> bool {
        self == call || (self == Access::Edit && call == Access::Write)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct PathGlob {
    root: Root,
    /// Segments; `**` is any number of them.
    segments: Vec<String>,
    /// As written, for display.
    text: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Root {
    Project,
    Home,
    Absolute,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Domain {
    /// `domain:*`.
    Any,
    Exact(String),
    /// `domain:*.docs.rs`: the suffix `.docs.rs`.
    Subdomains(String),
}

/// How specific a pattern is: a class (0 a whole tool, 1 a prefix, glob,
/// wildcard domain or MCP server, 2 an exact one), then a length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Specificity(u8, usize);

/// Tools whose rules take an argument.
const BASH: &str = "Bash";
const WEB_FETCH: &str = "WebFetch";
const MCP: &str = "mcp__";

impl RulePattern {
    /// Reads a rule pattern (`Bash(npm run test:*)`, `Edit(src/**)`,
    /// `WebFetch(domain:docs.rs)`, `mcp__github`).
    pub fn parse(text: &str) -> Result<RulePattern, RuleError> {
        let lead = text.chars().take_while(|c| c.is_whitespace()).count();
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Err(RuleError::Empty);
        }
        let chars: Vec<char> = trimmed.chars().collect();
        let name_end = chars
            .iter()
            .position(|&c| !(c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '*'))
            .unwrap_or(chars.len());
        let tool: String = chars[..name_end].iter().collect();
        if tool.is_empty() {
            return Err(RuleError::ToolName {
                at: lead,
                found: chars[0],
            });
        }
        if let Some(rest) = tool.strip_prefix(MCP) {
            if name_end < chars.len() {
                return Err(RuleError::Mcp {
                    at: lead + name_end,
                    problem: "an MCP rule takes no argument",
                });
            }
            return parse_mcp(rest, lead + MCP.len());
        }
        if let Some(star) = tool.find('*') {
            return Err(RuleError::Wildcard {
                at: lead + star,
                found: '*',
                hint: "a tool name is written whole",
            });
        }
        if name_end == chars.len() {
            return Ok(RulePattern {
                kind: Kind::Tool(tool),
            });
        }
        if chars[name_end] != '(' {
            return Err(RuleError::ToolName {
                at: lead + name_end,
                found: chars[name_end],
            });
        }
        let open = name_end;
        let Some(close) = chars.iter().rposition(|&c| c == ')').filter(|&c| c > open) else {
            return Err(RuleError::MissingParen {
                at: lead + chars.len(),
            });
        };
        if close + 1 < chars.len() {
            return Err(RuleError::Trailing {
                at: lead + close + 1,
                found: chars[close + 1],
            });
        }
        let inner: String = chars[open + 1..close].iter().collect();
        let at = lead + open + 1;
        if inner.trim().is_empty() {
            return Err(RuleError::EmptyParens { at, tool });
        }
        let kind = match tool.as_str() {
            BASH => parse_command(&inner, at)?,
            "Edit" => parse_path(Access::Edit, &inner, at)?,
            "Write" => parse_path(Access::Write, &inner, at)?,
            "Read" => parse_path(Access::Read, &inner, at)?,
            WEB_FETCH => parse_domain(&inner, at)?,
            _ => return Err(RuleError::NoArgument { at, tool }),
        };
        Ok(RulePattern { kind })
    }

    /// The tool it is for, as Claude Code names it (`Bash`, `Edit`,
    /// `mcp__github__create_issue`; `mcp__github` for a whole server).
    pub fn tool(&self) -> String {
        match &self.kind {
            Kind::Tool(tool) => tool.clone(),
            Kind::Command { .. } => BASH.to_owned(),
            Kind::Path { access, .. } => access.tool().to_owned(),
            Kind::Domain(_) => WEB_FETCH.to_owned(),
            Kind::Mcp { server, tool } => match tool {
                Some(tool) => format!("{MCP}{server}__{tool}"),
                None => format!("{MCP}{server}"),
            },
        }
    }

    fn specificity(&self) -> Specificity {
        match &self.kind {
            Kind::Tool(_) | Kind::Domain(Domain::Any) => Specificity(0, 0),
            Kind::Command {
                words,
                prefix: false,
            } => Specificity(2, words.len()),
            Kind::Command {
                words,
                prefix: true,
            } => Specificity(1, words.len()),
            Kind::Path { glob, .. } => {
                let literal: usize = glob
                    .segments
                    .iter()
                    .map(|s| s.chars().filter(|c| !matches!(c, '*' | '?')).count() + 1)
                    .sum();
                let exact = glob.segments.iter().all(|s| !s.contains(['*', '?']));
                Specificity(if exact { 2 } else { 1 }, literal)
            }
            Kind::Domain(Domain::Exact(host)) => Specificity(2, host.len()),
            Kind::Domain(Domain::Subdomains(suffix)) => Specificity(1, suffix.len()),
            Kind::Mcp { tool: Some(_), .. } => Specificity(2, 0),
            Kind::Mcp { tool: None, .. } => Specificity(1, 0),
        }
    }
}

impl fmt::Display for RulePattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::Tool(tool) => f.write_str(tool),
            Kind::Command { words, prefix } => {
                let words: Vec<String> = words.iter().map(|w| shell_quote(w)).collect();
                let star = if *prefix { ":*" } else { "" };
                write!(f, "{BASH}({}{star})", words.join(" "))
            }
            Kind::Path { access, glob } => write!(f, "{}({})", access.tool(), glob.text),
            Kind::Domain(domain) => {
                let domain = match domain {
                    Domain::Any => "*".to_owned(),
                    Domain::Exact(host) => host.clone(),
                    Domain::Subdomains(suffix) => format!("*{suffix}"),
                };
                write!(f, "{WEB_FETCH}(domain:{domain})")
            }
            Kind::Mcp { .. } => f.write_str(&self.tool()),
        }
    }
}

/// A word as the shell would read it back.
fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_alphanumeric() || "-_./:=@%+,^~".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

fn parse_mcp(rest: &str, at: usize) -> Result<RulePattern, RuleError> {
    let (server, tool) = match rest.split_once("__") {
        Some((server, tool)) => (server, Some(tool)),
        None => (rest, None),
    };
    let problem = |offset: usize, problem| RuleError::Mcp {
        at: at + offset,
        problem,
    };
    if server.is_empty() || server.contains('*') {
        return Err(problem(0, "an MCP rule names its server: `mcp__server`"));
    }
    let tool = match tool {
        None | Some("*") => None,
        Some("") => return Err(problem(server.len() + 2, "a tool name or `*` expected")),
        Some(tool) => {
            if let Some(star) = tool.find('*') {
                return Err(RuleError::Wildcard {
                    at: at + server.len() + 2 + star,
                    found: '*',
                    hint: "`mcp__server__*` is every tool of a server; a tool is written whole",
                });
            }
            Some(tool.to_owned())
        }
    };
    Ok(RulePattern {
        kind: Kind::Mcp {
            server: server.to_owned(),
            tool,
        },
    })
}

fn parse_command(inner: &str, at: usize) -> Result<Kind, RuleError> {
    let trimmed = inner.trim_end();
    let (body, mut prefix) = match trimmed.strip_suffix(":*") {
        Some(body) => (body, true),
        None => (trimmed, false),
    };
    let lexed = shell::lex(body).map_err(|error| RuleError::Command {
        at: at + error.at,
        problem: error.problem,
    })?;
    if let Some((at_, problem)) = lexed.parts.iter().find_map(|part| part.unclean) {
        return Err(RuleError::Command {
            at: at + at_,
            problem,
        });
    }
    if let Some(&(at_, operator)) = lexed.separators.first() {
        return Err(RuleError::Command {
            at: at + at_,
            problem: match operator {
                ";" => "`;`",
                "&&" => "`&&`",
                "||" => "`||`",
                "|" => "`|`",
                "|&" => "`|&`",
                "&" => "`&`",
                "(" | ")" => "a subshell",
                _ => "a newline",
            },
        });
    }
    let mut words = lexed.parts.into_iter().next().unwrap_or_default().words;
    if !prefix && words.last().is_some_and(|w| w.text == "*" && !w.quoted) {
        words.pop();
        prefix = true;
    }
    if let Some(glob_at) = words.iter().find_map(|word| word.glob_at) {
        let found = inner.chars().nth(glob_at).unwrap_or('*');
        return Err(RuleError::Wildcard {
            at: at + glob_at,
            found,
            hint: "only a trailing `:*` or ` *` is, or quote it",
        });
    }
    if words.is_empty() {
        // `Bash(*)`, `Bash(:*)`: every command.
        return Ok(Kind::Tool(BASH.to_owned()));
    }
    Ok(Kind::Command {
        words: words.into_iter().map(|w| w.text).collect(),
        prefix,
    })
}

fn parse_path(access: Access, inner: &str, at: usize) -> Result<Kind, RuleError> {
    let text = inner.trim();
    let at = at + inner.chars().take_while(|c| c.is_whitespace()).count();
    let (root, rest, skipped) = if let Some(rest) = text.strip_prefix("//") {
        (Root::Absolute, rest, 2)
    } else if let Some(rest) = text.strip_prefix("~/") {
        (Root::Home, rest, 2)
    } else if text.starts_with('~') {
        return Err(RuleError::Tilde { at });
    } else if let Some(rest) = text.strip_prefix("./") {
        (Root::Project, rest, 2)
    } else if let Some(rest) = text.strip_prefix('/') {
        (Root::Project, rest, 1)
    } else {
        (Root::Project, text, 0)
    };
    let anchored = skipped > 0 || rest.trim_end_matches('/').contains('/');
    let mut segments = Vec::new();
    if !anchored {
        segments.push("**".to_owned());
    }
    let mut offset = at + skipped;
    for segment in rest.split('/') {
        if let Some(bad) = segment.find('[') {
            return Err(RuleError::Wildcard {
                at: offset + segment[..bad].chars().count(),
                found: '[',
                hint: "character classes are not supported",
            });
        }
        match segment {
            "" | "." => {}
            ".." => return Err(RuleError::ParentDir { at: offset }),
            "**" => segments.push("**".to_owned()),
            // Elsewhere `**` is an ordinary `*`, as in gitignore.
            _ => segments.push(segment.replace("**", "*")),
        }
        offset += segment.chars().count() + 1;
    }
    if rest.is_empty() || rest.ends_with('/') {
        segments.push("**".to_owned());
    }
    Ok(Kind::Path {
        access,
        glob: PathGlob {
            root,
            segments,
            text: text.to_owned(),
        },
    })
}

fn parse_domain(inner: &str, at: usize) -> Result<Kind, RuleError> {
    let text = inner.trim();
    let at = at + inner.chars().take_while(|c| c.is_whitespace()).count();
    let Some(domain) = text.strip_prefix("domain:") else {
        return Err(RuleError::NotDomain { at });
    };
    let at = at + "domain:".len();
    let domain = domain.to_lowercase();
    if domain.is_empty() {
        return Err(RuleError::NotDomain { at });
    }
    if domain == "*" {
        return Ok(Kind::Domain(Domain::Any));
    }
    let (wild, host) = match domain.strip_prefix("*.") {
        Some(host) => (true, host),
        None => (false, domain.as_str()),
    };
    let offset = if wild { 2 } else { 0 };
    for (n, c) in host.chars().enumerate() {
        if c == '*' {
            return Err(RuleError::Wildcard {
                at: at + offset + n,
                found: c,
                hint: "a domain takes `*.` only at its start",
            });
        }
        if !(c.is_alphanumeric() || matches!(c, '.' | '-' | '_')) {
            return Err(RuleError::Domain {
                at: at + offset + n,
                found: c,
            });
        }
    }
    let host = host.trim_end_matches('.');
    if host.is_empty() || host.starts_with('.') {
        return Err(RuleError::NotDomain { at });
    }
    Ok(Kind::Domain(if wild {
        Domain::Subdomains(format!(".{host}"))
    } else {
        Domain::Exact(host.to_owned())
    }))
}

/// An absolute path's segments, `.` and `..` resolved lexically; a
/// relative path is taken from `base`. `None` when there is no absolute
/// base to read it from.
fn normalize(path: &str, base: Option<&str>) -> Option<Vec<String>> {
    let mut segments = Vec::new();
    let full = if path.starts_with('/') {
        path.to_owned()
    } else {
        let base = base.filter(|base| base.starts_with('/'))?;
        format!("{base}/{path}")
    };
    for segment in full.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            _ => segments.push(segment.to_owned()),
        }
    }
    Some(segments)
}

/// Whether path segments match glob segments (`**` any number of them).
fn glob_matches(glob: &[String], path: &[String]) -> bool {
    // reachable[j]: the glob so far can end just before path[j].
    let mut reachable = vec![false; path.len() + 1];
    reachable[0] = true;
    for segment in glob {
        let mut next = vec![false; path.len() + 1];
        if segment == "**" {
            let mut any = false;
            for j in 0..=path.len() {
                any |= reachable[j];
                next[j] = any;
            }
        } else {
            for j in 0..path.len() {
                if reachable[j] && wildcard_matches(segment, &path[j]) {
                    next[j + 1] = true;
                }
            }
        }
        reachable = next;
    }
    reachable[path.len()]
}

/// `*` and `?` within one path segment.
fn wildcard_matches(pattern: &str, text: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let text: Vec<char> = text.chars().collect();
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() && (pattern[p] == '?' || pattern[p] == text[t]) {
            p += 1;
            t += 1;
        } else if p < pattern.len() && pattern[p] == '*' {
            star = Some((p, t));
            p += 1;
        } else if let Some((sp, st)) = star {
            p = sp + 1;
            t = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

/// What one unit of a call is, for matching: a simple command, a file, a
/// fetch, an MCP tool, or any other call.
#[derive(Debug, Clone)]
enum Unit {
    Command {
        words: Vec<String>,
        /// Whether an `allow` command rule may vouch for it.
        clean: bool,
    },
    /// A file; `None` when the call names none.
    File {
        access: Access,
        path: Option<Vec<String>>,
    },
    /// The URL's host; `None` when it has none.
    Fetch(Option<String>),
    Mcp {
        server: String,
        tool: String,
    },
    Other,
}

/// A call as the rules see it: the tool names a whole-tool rule matches,
/// and its units.
#[derive(Debug, Clone)]
struct Call {
    names: Vec<String>,
    units: Vec<Unit>,
}

const SHELL_TOOLS: [&str; 6] = [
    "Bash",
    "Shell",
    "exec_command",
    "shell",
    "bash",
    "powershell",
];

/// The canonical tool a host's tool counts as, for file tools.
fn file_access(tool: &str) -> Option<Access> {
    Some(match tool {
        "Edit" | "MultiEdit" | "NotebookEdit" | "edit" | "str_replace_editor" | "StrReplace"
        | "Delete" | "edit_file" | "search_replace" | "delete_file" | "apply_patch" => Access::Edit,
        "Write" | "create" => Access::Write,
        "Read" | "NotebookRead" | "view" => Access::Read,
        _ => return None,
    })
}

fn text<'a>(input: &'a Map<String, Value>, keys: &[&str]) -> Option<&'a str> {
    keys.iter().find_map(|key| input.get(*key)?.as_str())
}

/// The command of a shell call: the line to read, or the words of an
/// argument list run without a shell.
enum ShellInput {
    Line(String),
    Words(Vec<String>),
}

fn shell_input(input: &Map<String, Value>) -> ShellInput {
    match input.get("command").or_else(|| input.get("cmd")) {
        Some(Value::String(line)) => ShellInput::Line(line.clone()),
        Some(Value::Array(words)) => {
            let words: Vec<String> = words
                .iter()
                .map(|word| {
                    word.as_str()
                        .map_or_else(|| word.to_string(), str::to_owned)
                })
                .collect();
            // `["bash", "-lc", "npm test"]`: the script is the command.
            let shells = ["bash", "sh", "zsh", "/bin/bash", "/bin/sh", "/bin/zsh"];
            match words.as_slice() {
                [shell, flag, script]
                    if shells.contains(&shell.as_str())
                        && matches!(flag.as_str(), "-c" | "-lc" | "-ic") =>
                {
                    ShellInput::Line(script.clone())
                }
                _ => ShellInput::Words(words),
            }
        }
        Some(other) => ShellInput::Line(other.to_string()),
        None => ShellInput::Line(String::new()),
    }
}

/// The simple commands of a shell call.
fn command_units(input: &Map<String, Value>) -> Vec<Unit> {
    let line = match shell_input(input) {
        ShellInput::Words(words) => return vec![Unit::Command { words, clean: true }],
        ShellInput::Line(line) => line,
    };
    match shell::lex(&line) {
        Ok(lexed) if !lexed.parts.is_empty() => lexed
            .parts
            .iter()
            .map(|part| Unit::Command {
                words: part.texts(),
                clean: part.unclean.is_none(),
            })
            .collect(),
        Ok(_) => vec![Unit::Command {
            words: Vec::new(),
            clean: false,
        }],
        Err(_) => vec![Unit::Command {
            words: shell::rough_words(&line),
            clean: false,
        }],
    }
}

/// The files a patch in Codex's `apply_patch` form touches.
fn patch_files(patch: &str) -> Vec<String> {
    let markers = [
        "*** Add File: ",
        "*** Update File: ",
        "*** Delete File: ",
        "*** Move to: ",
    ];
    patch
        .lines()
        .filter_map(|line| {
            markers
                .iter()
                .find_map(|marker| line.trim_start().strip_prefix(marker))
        })
        .map(|path| path.trim().to_owned())
        .collect()
}

/// The host of a URL, lower case, without user name, port or trailing dot.
fn url_host(url: &str) -> Option<String> {
    let (_, rest) = url.trim().split_once("://")?;
    let authority = rest.split(['/', '\\', '?', '#']).next()?;
    let host_port = authority.rsplit('@').next()?;
    let host = if let Some(bracketed) = host_port.strip_prefix('[') {
        bracketed.split(']').next()?
    } else {
        host_port.split(':').next()?
    };
    let host = host.trim_end_matches('.').to_lowercase();
    (!host.is_empty()).then_some(host)
}

impl Call {
    fn of(event: &HookEvent) -> Call {
        let tool = event.tool_name.as_str();
        let input = &event.tool_input;
        let mut names = vec![tool.to_owned()];
        let units = if SHELL_TOOLS.contains(&tool) {
            names.push(BASH.to_owned());
            command_units(input)
        } else if let Some(access) = file_access(tool) {
            names.push(access.tool().to_owned());
            if access == Access::Write {
                names.push(Access::Edit.tool().to_owned());
            }
            let paths: Vec<String> = if tool == "apply_patch" {
                let patch = input
                    .values()
                    .filter_map(Value::as_str)
                    .find(|text| text.contains("*** Begin Patch"));
                patch.map(patch_files).unwrap_or_default()
            } else {
                text(
                    input,
                    &[
                        "file_path",
                        "path",
                        "notebook_path",
                        "target_file",
                        "filePath",
                    ],
                )
                .map(|path| vec![path.to_owned()])
                .unwrap_or_default()
            };
            if paths.is_empty() {
                vec![Unit::File { access, path: None }]
            } else {
                paths
                    .iter()
                    .map(|path| Unit::File {
                        access,
                        path: normalize(path, Some(&event.cwd)),
                    })
                    .collect()
            }
        } else if matches!(tool, "WebFetch" | "web_fetch") {
            names.push(WEB_FETCH.to_owned());
            vec![Unit::Fetch(text(input, &["url"]).and_then(url_host))]
        } else if let Some((server, tool)) = tool
            .strip_prefix(MCP)
            .and_then(|rest| rest.split_once("__"))
        {
            vec![Unit::Mcp {
                server: server.to_owned(),
                tool: tool.to_owned(),
            }]
        } else {
            vec![Unit::Other]
        };
        names.dedup();
        Call { names, units }
    }
}

/// Where a rule pattern's relative paths start, and the home directory.
/// Normalised once per call.
struct Places {
    cwd: Option<Vec<String>>,
    home: Option<Vec<String>>,
}

impl RulePattern {
    /// Whether the pattern matches `unit` for a rule of `effect` (`allow`
    /// reads a command strictly, `deny` and `ask` broadly), with relative
    /// paths from `project`.
    fn matches(
        &self,
        unit: &Unit,
        effect: &Effect,
        project: Option<&[String]>,
        places: &Places,
    ) -> bool {
        match (&self.kind, unit) {
            (Kind::Command { words, prefix }, Unit::Command { words: part, clean }) => {
                let at = |start: usize| {
                    let rest = &part[start..];
                    if *prefix {
                        rest.starts_with(words)
                    } else {
                        rest == words.as_slice()
                    }
                };
                match effect {
                    Effect::Allow => *clean && at(0),
                    Effect::Deny(_) | Effect::Ask => (0..part.len()).any(at),
                }
            }
            (
                Kind::Path { access, glob },
                Unit::File {
                    access: call,
                    path: Some(path),
                },
            ) if access.covers(*call) => {
                let base: Option<&[String]> = match glob.root {
                    Root::Absolute => Some(&[]),
                    Root::Home => places.home.as_deref(),
                    Root::Project => project,
                };
                let Some(rest) = base.and_then(|base| path.strip_prefix(base)) else {
                    return false;
                };
                // Most globs start with a literal directory: compare it first.
                let literal = glob.segments.first().filter(|s| !s.contains(['*', '?']));
                if literal.is_some_and(|first| rest.first() != Some(first)) {
                    return false;
                }
                glob_matches(&glob.segments, rest)
            }
            (Kind::Domain(domain), Unit::Fetch(Some(host))) => match domain {
                Domain::Any => true,
                Domain::Exact(exact) => host == exact,
                Domain::Subdomains(suffix) => host.ends_with(suffix.as_str()),
            },
            (Kind::Mcp { server, tool }, Unit::Mcp { server: s, tool: t }) => {
                server == s && tool.as_ref().is_none_or(|tool| tool == t)
            }
            _ => false,
        }
    }
}

/// What the rules decided for a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict<'a> {
    /// Every part of the call is allowed, by these rules (each once, in
    /// the order the parts came).
    Allow(Vec<&'a Rule>),
    /// A part is denied by this rule (its words are for the agent).
    Deny(&'a Rule),
    /// A part must be asked about in the chat, by this rule.
    Ask(&'a Rule),
}

/// Rules, indexed by what they match, to decide calls against.
#[derive(Debug, Clone, Default)]
pub struct Ruleset {
    rules: Vec<Rule>,
    /// Each rule's project directory, normalised (`None` for none, or
    /// for one that is not absolute: such a rule covers nothing).
    projects: Vec<Option<Vec<String>>>,
    /// Whole-tool rules by tool name.
    tools: HashMap<String, Vec<usize>>,
    /// Command rules by their first word.
    commands: HashMap<String, Vec<usize>>,
    /// Path rules by the access they are for.
    paths: HashMap<Access, Vec<usize>>,
    /// Exact-domain rules by host; wildcard ones apart.
    domains: HashMap<String, Vec<usize>>,
    wild_domains: Vec<usize>,
    /// MCP rules by server.
    servers: HashMap<String, Vec<usize>>,
}

impl Ruleset {
    pub fn new(rules: Vec<Rule>) -> Ruleset {
        let mut set = Ruleset::default();
        for (n, rule) in rules.iter().enumerate() {
            let slot = match &rule.pattern.kind {
                Kind::Tool(tool) => set.tools.entry(tool.clone()).or_default(),
                Kind::Command { words, .. } => set.commands.entry(words[0].clone()).or_default(),
                Kind::Path { access, .. } => set.paths.entry(*access).or_default(),
                Kind::Domain(Domain::Exact(host)) => set.domains.entry(host.clone()).or_default(),
                Kind::Domain(_) => &mut set.wild_domains,
                Kind::Mcp { server, .. } => set.servers.entry(server.clone()).or_default(),
            };
            slot.push(n);
        }
        set.projects = rules
            .iter()
            .map(|rule| normalize(rule.scope.project.as_deref()?, None))
            .collect();
        set.rules = rules;
        set
    }

    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// The verdict of the rules on `event` at `now`; `None` when they do
    /// not decide it (no rule matches some part), so the person is asked.
    /// `home` is the user's home directory, for `~/` patterns (which match
    /// nothing without it).
    pub fn decide(
        &self,
        event: &HookEvent,
        now: Timestamp,
        home: Option<&str>,
    ) -> Option<Verdict<'_>> {
        let call = Call::of(event);
        let places = Places {
            cwd: normalize(&event.cwd, None),
            home: home.and_then(|home| normalize(home, None)),
        };
        let mut allowed: Vec<&Rule> = Vec::new();
        let mut asked = None;
        let mut undecided = false;
        for unit in &call.units {
            match self.decide_unit(&call, unit, event, now, &places) {
                Some(rule) => match rule.effect {
                    Effect::Deny(_) => return Some(Verdict::Deny(rule)),
                    Effect::Ask => {
                        asked.get_or_insert(rule);
                    }
                    Effect::Allow => {
                        if !allowed.iter().any(|seen| std::ptr::eq(*seen, rule)) {
                            allowed.push(rule);
                        }
                    }
                },
                None => undecided = true,
            }
        }
        if let Some(rule) = asked {
            return Some(Verdict::Ask(rule));
        }
        (!undecided && !allowed.is_empty()).then_some(Verdict::Allow(allowed))
    }

    /// The rule that decides one unit: the most specific, then the
    /// strictest, then the narrowest in scope; the earliest of equals.
    fn decide_unit<'a>(
        &'a self,
        call: &Call,
        unit: &Unit,
        event: &HookEvent,
        now: Timestamp,
        places: &Places,
    ) -> Option<&'a Rule> {
        let mut best: Option<((Specificity, u8, u8), usize)> = None;
        let mut consider = |n: usize| {
            let rule = &self.rules[n];
            let project = self.projects[n].as_deref();
            if !rule.is_live(now) || !rule.scope.covers(event, project, places.cwd.as_deref()) {
                return;
            }
            let whole_tool = matches!(rule.pattern.kind, Kind::Tool(_));
            let project = if rule.scope.project.is_some() {
                project
            } else {
                places.cwd.as_deref()
            };
            if !whole_tool && !rule.pattern.matches(unit, &rule.effect, project, places) {
                return;
            }
            let key = (
                rule.pattern.specificity(),
                rule.effect.rank(),
                rule.scope.narrowness(),
            );
            if best.is_none_or(|(best, m)| key > best || (key == best && n < m)) {
                best = Some((key, n));
            }
        };
        for name in &call.names {
            self.tools
                .get(name)
                .into_iter()
                .flatten()
                .for_each(|&n| consider(n));
        }
        match unit {
            Unit::Command { words, .. } => {
                for (position, word) in words.iter().enumerate() {
                    for &n in self.commands.get(word).into_iter().flatten() {
                        // Past the first word only `deny` and `ask` look.
                        if position == 0 || self.rules[n].effect != Effect::Allow {
                            consider(n);
                        }
                    }
                }
            }
            Unit::File { access, .. } => {
                for rule_access in [Access::Read, Access::Edit, Access::Write] {
                    if rule_access.covers(*access) {
                        self.paths
                            .get(&rule_access)
                            .into_iter()
                            .flatten()
                            .for_each(|&n| consider(n));
                    }
                }
            }
            Unit::Fetch(host) => {
                if let Some(host) = host {
                    self.domains
                        .get(host)
                        .into_iter()
                        .flatten()
                        .for_each(|&n| consider(n));
                }
                self.wild_domains.iter().for_each(|&n| consider(n));
            }
            Unit::Mcp { server, .. } => {
                self.servers
                    .get(server)
                    .into_iter()
                    .flatten()
                    .for_each(|&n| consider(n));
            }
            Unit::Other => {}
        }
        best.map(|(_, n)| &self.rules[n])
    }
}

/// Commands for which a prefix rule would allow far more than the call:
/// those whose arguments are a command or a program, and those that
/// destroy, send or fetch whatever their arguments name. Only the exact
/// command is proposed.
const EXACT_ONLY: &[&str] = &[
    "rm",
    "rmdir",
    "dd",
    "mkfs",
    "shred",
    "chmod",
    "chown",
    "curl",
    "wget",
    "scp",
    "rsync",
    "nc",
    "kill",
    "pkill",
    "killall",
    "bash",
    "sh",
    "zsh",
    "fish",
    "dash",
    "pwsh",
    "powershell",
    "eval",
    "exec",
    "source",
    ".",
    "sudo",
    "doas",
    "su",
    "env",
    "xargs",
    "nohup",
    "nice",
    "timeout",
    "time",
    "command",
    "builtin",
    "watch",
    "ssh",
    "python",
    "python3",
    "node",
    "ruby",
    "perl",
    "php",
    "deno",
    "bun",
    "npx",
    "bunx",
    "pnpx",
    "uvx",
    "find",
    "awk",
    "sed",
    "osascript",
    "docker",
    "kubectl",
];

/// Commands whose second word says what they do (`cargo test`, `git push`).
const TWO_WORDS: &[&str] = &[
    "npm",
    "pnpm",
    "yarn",
    "cargo",
    "git",
    "go",
    "gh",
    "pip",
    "pip3",
    "uv",
    "poetry",
    "make",
    "just",
    "dotnet",
    "mvn",
    "gradle",
    "./gradlew",
    "mix",
    "rake",
    "bundle",
    "composer",
    "swift",
    "terraform",
    "helm",
    "brew",
    "apt",
    "apt-get",
    "rustup",
    "pytest",
    "tox",
    "nx",
    "turbo",
];

/// Package managers whose `run X` runs the script X.
const SCRIPT_RUNNERS: &[&str] = &["npm", "pnpm", "yarn", "bun"];

/// Directories a rule should never open: the repository's internals and
/// the agents' own settings (an agent allowed to edit those can allow
/// itself anything).
const GUARDED: &[&str] = &[".git", ".claude", ".codex", ".cursor", ".vscode", ".idea"];

/// The narrowest sensible rule for `event`'s call, for an "Always allow"
/// button; `None` when there is no safe one.
///
/// - A command: its first words with `:*` — three for a package script
///   (`npm run test -- --watch` → `Bash(npm run test:*)`), two for tools
///   whose second word is the action (`cargo test`, `git push`), one
///   otherwise (`ls -la` → `Bash(ls:*)`). A command that runs other
///   programs (`bash`, `sudo`, `xargs`, `python`, `docker`…) gets only its
///   exact self; a compound or unclean command (see the module docs) or an
///   unreadable one gets nothing.
/// - A file change or read inside the project: its directory
///   (`Edit(src/render/**)`, `Edit(./*)` at the top); nothing for a file
///   outside the project, in `.git` or in an agent's settings directory.
/// - A fetch: its host (`WebFetch(domain:docs.rs)`).
/// - An MCP tool: the tool itself.
/// - Any other tool: nothing (its calls have no narrower form).
pub fn propose(event: &HookEvent) -> Option<RulePattern> {
    let call = Call::of(event);
    let tool = event.tool_name.as_str();
    let text = match call.units.as_slice() {
        [Unit::Command { .. }] if SHELL_TOOLS.contains(&tool) => propose_command(event)?,
        [Unit::File { access, path }, rest @ ..] => {
            let dir = project_dir(path.as_ref()?, &event.cwd)?;
            // A patch over several files: only when they share the directory.
            for unit in rest {
                let Unit::File { path: other, .. } = unit else {
                    return None;
                };
                if project_dir(other.as_ref()?, &event.cwd)? != dir {
                    return None;
                }
            }
            let access = if *access == Access::Write {
                Access::Edit
            } else {
                *access
            };
            if dir.is_empty() {
                format!("{}(./*)", access.tool())
            } else {
                format!("{}({}/**)", access.tool(), dir.join("/"))
            }
        }
        [Unit::Fetch(host)] => format!("{WEB_FETCH}(domain:{})", host.as_ref()?),
        [Unit::Mcp { server, tool }] => format!("{MCP}{server}__{tool}"),
        _ => return None,
    };
    RulePattern::parse(&text).ok()
}

fn propose_command(event: &HookEvent) -> Option<String> {
    let words = match shell_input(&event.tool_input) {
        ShellInput::Words(words) => words,
        ShellInput::Line(line) => {
            let lexed = shell::lex(&line).ok()?;
            let [part] = lexed.parts.as_slice() else {
                return None;
            };
            if part.unclean.is_some() {
                return None;
            }
            part.texts()
        }
    };
    let first = words.first()?;
    let is_assignment = |word: &str| {
        word.split_once('=').is_some_and(|(name, _)| {
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
    };
    if is_assignment(first) || words.iter().any(|w| w.contains(['\n', '\0'])) {
        return None;
    }
    let flag = |n: usize| words.get(n).is_some_and(|w| w.starts_with('-'));
    let exact = || {
        let quoted: Vec<String> = words.iter().map(|w| shell_quote(w)).collect();
        Some(format!("{BASH}({})", quoted.join(" ")))
    };
    let base = first.rsplit('/').next().unwrap_or(first);
    if EXACT_ONLY.contains(&base) {
        return exact();
    }
    let script = SCRIPT_RUNNERS.contains(&first.as_str())
        && words
            .get(1)
            .is_some_and(|w| matches!(w.as_str(), "run" | "run-script"));
    // Too few words, or a flag where the action should be: only the
    // command itself is narrow enough.
    let take = if script {
        3
    } else if TWO_WORDS.contains(&first.as_str()) {
        2
    } else {
        1
    };
    if words.len() < take || (1..take).any(flag) {
        return exact();
    }
    let prefix: Vec<String> = words[..take].iter().map(|w| shell_quote(w)).collect();
    Some(format!("{BASH}({}:*)", prefix.join(" ")))
}

/// The directory of a file inside the project, relative to it; `None`
/// outside it or under a guarded directory.
fn project_dir(path: &[String], cwd: &str) -> Option<Vec<String>> {
    let root = normalize(cwd, None)?;
    let inside = path.strip_prefix(root.as_slice())?;
    let (_, dir) = inside.split_last()?;
    if dir
        .iter()
        .any(|segment| GUARDED.contains(&segment.as_str()))
    {
        return None;
    }
    Some(dir.to_vec())
}
