//! Masking what looks like a credential in what a chat shows: an agent's
//! context block may hold a command line with a token in it. What the
//! agent gets back, and the ask on record, are never masked.
//!
//! The text goes through one pass per shape, each replacing a value with
//! [`MASK`] and keeping what says what kind it was (a prefix, a name, an
//! authorization's scheme, a user):
//!
//! 1. PEM private key blocks (their first and last lines kept);
//! 2. tokens by their prefix (`sk-`, `ghp_`, `AKIA`, …), JWTs, the word
//!    after `Bearer`;
//! 3. the password in a URL (`https://user:••••••@host`);
//! 4. `mysql -p…` glued to its flag, `sshpass -p …` and `curl -u
//!    user:…`, where the command says what the flag means;
//! 5. the value of a setting, header or flag whose name says it is secret
//!    (`DB_PASSWORD=…`, `X-Api-Key: …`, `--token …`, `"client_secret":
//!    "…"`; `Authorization: Basic …` keeps its scheme).
//!
//! A value masked by an earlier pass is left alone by the later ones.

/// What a masked value is shown as.
const MASK: &str = "••••••";

/// Shortest word after `Bearer` taken for a token.
const SECRET_MIN_CHARS: usize = 8;

/// What may follow a token prefix for the token to be taken for a
/// credential.
#[derive(Clone, Copy)]
enum Rest {
    /// At least this many token characters.
    AtLeast(usize),
    /// At least this many letters and digits, and nothing else (so
    /// `npm_config_cache` is not a token).
    Alphanumeric(usize),
    /// Exactly sixteen capital letters and digits (AWS key ids).
    AwsKeyId,
}

/// Prefixes of tokens masked in what a chat shows, and what must follow.
const SECRET_PREFIXES: [(&str, Rest); 24] = [
    ("sk-", Rest::AtLeast(8)),
    ("sk_live_", Rest::AtLeast(8)),
    ("sk_test_", Rest::AtLeast(8)),
    ("rk_live_", Rest::AtLeast(8)),
    ("rk_test_", Rest::AtLeast(8)),
    ("ghp_", Rest::AtLeast(8)),
    ("gho_", Rest::AtLeast(8)),
    ("ghs_", Rest::AtLeast(8)),
    ("ghu_", Rest::AtLeast(8)),
    ("ghr_", Rest::AtLeast(8)),
    ("github_pat_", Rest::AtLeast(8)),
    ("glpat-", Rest::AtLeast(8)),
    ("xoxb-", Rest::AtLeast(8)),
    ("xoxp-", Rest::AtLeast(8)),
    ("xoxa-", Rest::AtLeast(8)),
    ("xoxs-", Rest::AtLeast(8)),
    ("xoxe", Rest::AtLeast(8)),
    ("xapp-", Rest::AtLeast(8)),
    ("AIza", Rest::AtLeast(30)),
    ("npm_", Rest::Alphanumeric(30)),
    ("hf_", Rest::Alphanumeric(30)),
    ("AKIA", Rest::AwsKeyId),
    ("ASIA", Rest::AwsKeyId),
    // JWTs: a header and a payload, both JSON objects in base64url.
    ("eyJ", Rest::AtLeast(16)),
];

/// Words that make a name secret (`DB_PASSWORD`, `X-Api-Key`, `authToken`).
const SECRET_WORDS: [&str; 17] = [
    "pass",
    "passwd",
    "password",
    "passphrase",
    "pwd",
    "secret",
    "token",
    "key",
    "apikey",
    "accesskey",
    "secretkey",
    "privatekey",
    "credential",
    "credentials",
    "creds",
    "auth",
    "authorization",
];

/// Endings that make a word secret on their own (`PGPASSWORD`,
/// `accesstoken`, `clientsecret`).
const SECRET_ENDINGS: [&str; 6] = [
    "password",
    "passwd",
    "secret",
    "token",
    "apikey",
    "credentials",
];

/// Last words of names that point at a secret or describe it but do not
/// hold it (`--key-file`, `TOKEN_URL`, `AUTH_METHOD`, `--password-stdin`).
const NOT_SECRET_LAST_WORDS: [&str; 47] = [
    "file",
    "files",
    "path",
    "dir",
    "directory",
    "id",
    "ids",
    "name",
    "names",
    "type",
    "kind",
    "url",
    "uri",
    "endpoint",
    "host",
    "port",
    "server",
    "domain",
    "length",
    "len",
    "size",
    "count",
    "env",
    "mode",
    "method",
    "format",
    "prefix",
    "suffix",
    "header",
    "field",
    "hint",
    "var",
    "stdin",
    "cmd",
    "command",
    "enabled",
    "disabled",
    "required",
    "provider",
    "scheme",
    "user",
    "username",
    "sock",
    "socket",
    "ttl",
    "timeout",
    "expiry",
];

/// Words before `key` that make it an ordinary key (`PRIMARY_KEY`,
/// `public_key`, `--sort-key`).
const ORDINARY_KEYS: [&str; 10] = [
    "primary",
    "foreign",
    "sort",
    "partition",
    "hash",
    "range",
    "cache",
    "public",
    "pub",
    "idempotency",
];

/// Commands whose `-p` takes the password glued to it (`-phunter2`;
/// `-p hunter2` would be a database name).
const MYSQL_LIKE: [&str; 10] = [
    "mysql",
    "mysqldump",
    "mysqladmin",
    "mysqlimport",
    "mysqlshow",
    "mysqlcheck",
    "mysqlpump",
    "mariadb",
    "mariadb-dump",
    "mariadb-admin",
];

/// Container tools whose `login -p` takes the password.
const REGISTRY_LOGINS: [&str; 4] = ["docker", "podman", "nerdctl", "buildah"];

/// `text` with values that look like credentials masked (what says what
/// kind it was kept, so the person still sees it): see the module's
/// documentation for the shapes.
pub fn mask_credentials(text: &str) -> String {
    let text = mask_private_keys(text);
    let text = mask_tokens(&text);
    let text = mask_url_passwords(&text);
    let text = mask_command_flags(&text);
    mask_named_values(&text)
}

/// A replacement of `text[start..end]`.
type Edit = (usize, usize, String);

/// `text` with `edits` (in order; one overlapping an earlier one is left
/// out) made.
fn apply(text: &str, edits: &[Edit]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for (start, end, replacement) in edits {
        if *start < copied {
            continue;
        }
        out.push_str(&text[copied..*start]);
        out.push_str(replacement);
        copied = *end;
    }
    out.push_str(&text[copied..]);
    out
}

fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '+' | '/')
}

/// Tokens by their prefixes, JWTs, and the word after `Bearer`.
fn mask_tokens(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut after_bearer = false;
    let mut rest = text;
    while !rest.is_empty() {
        let start = rest.find(is_token_char).unwrap_or(rest.len());
        let gap = &rest[..start];
        out.push_str(gap);
        rest = &rest[start..];
        let end = rest.find(|c: char| !is_token_char(c)).unwrap_or(rest.len());
        let token = &rest[..end];
        rest = &rest[end..];
        if token.is_empty() {
            continue;
        }
        // `Bearer $TOKEN` names a variable, not a token.
        let variable = gap.ends_with(['$', '{']);
        if after_bearer && !variable && token.chars().count() >= SECRET_MIN_CHARS {
            out.push_str(MASK);
        } else {
            out.push_str(&masked_token(token));
        }
        after_bearer = token.eq_ignore_ascii_case("bearer");
    }
    out
}

/// A token with what follows a secret prefix masked (past any leading
/// punctuation: `//ghp_…` in a URL).
fn masked_token(token: &str) -> String {
    let start = token
        .find(|c: char| c.is_ascii_alphanumeric())
        .unwrap_or(token.len());
    let (lead, word) = token.split_at(start);
    // A sentence's full stop is not part of the token.
    let word = word.trim_end_matches('.');
    let tail = &token[lead.len() + word.len()..];
    let secret = SECRET_PREFIXES.iter().find(|(prefix, rest)| {
        word.strip_prefix(prefix)
            .is_some_and(|after| rest_fits(after, *rest))
            && (*prefix != "eyJ" || is_jwt(word))
    });
    match secret {
        Some((prefix, _)) => format!("{lead}{prefix}{MASK}{tail}"),
        None => token.to_owned(),
    }
}

/// Whether what follows a prefix is long enough and of the right kind.
fn rest_fits(after: &str, rest: Rest) -> bool {
    match rest {
        Rest::AtLeast(chars) => after.len() >= chars,
        Rest::Alphanumeric(chars) => {
            after.len() >= chars && after.chars().all(|c| c.is_ascii_alphanumeric())
        }
        Rest::AwsKeyId => {
            after.len() == 16
                && after
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
        }
    }
}

/// A JWT: three base64url parts, the first two JSON objects (`eyJ`).
fn is_jwt(word: &str) -> bool {
    let parts: Vec<&str> = word.split('.').collect();
    parts.len() == 3 && parts[1].starts_with("eyJ") && parts[..2].iter().all(|part| part.len() >= 8)
}

/// The password of a URL's user (`https://alice:••••••@host`).
fn mask_url_passwords(text: &str) -> String {
    let mut edits = Vec::new();
    let mut from = 0;
    while let Some(found) = text[from..].find("://") {
        let start = from + found + 3;
        let end = text[start..]
            .find(|c: char| {
                c.is_whitespace()
                    || matches!(c, '/' | '?' | '#' | '"' | '\'' | '`' | '<' | '>' | ')')
            })
            .map_or(text.len(), |end| start + end);
        let authority = &text[start..end];
        if let Some((user, password)) = authority
            .rsplit_once('@')
            .and_then(|(userinfo, _)| userinfo.split_once(':'))
            && !password.is_empty()
            && !password.contains(MASK)
        {
            let password_start = start + user.len() + 1;
            edits.push((
                password_start,
                password_start + password.len(),
                MASK.to_owned(),
            ));
        }
        from = end.max(start);
    }
    apply(text, &edits)
}

/// Flags whose meaning the command gives: `mysql -p…` glued,
/// `sshpass -p …` and `docker login -p …`, `curl -u user:…` /
/// `--user user:…`.
fn mask_command_flags(text: &str) -> String {
    let mut edits = Vec::new();
    for (offset, segment) in segments(text) {
        let words = words_of_command(segment);
        let named = |names: &[&str]| {
            words
                .iter()
                .any(|(_, word)| names.contains(&command_name(word)))
        };
        let (mysql, curl) = (named(&MYSQL_LIKE), named(&["curl"]));
        let sshpass = named(&["sshpass"]) || (named(&REGISTRY_LOGINS) && named(&["login"]));
        for (n, (at, word)) in words.iter().enumerate() {
            let at = offset + at;
            let next = words
                .get(n + 1)
                .map(|(next_at, next)| (offset + next_at, *next));
            if (mysql || sshpass) && word.len() > 2 && word.starts_with("-p") {
                edits.push((at + 2, at + word.len(), MASK.to_owned()));
            } else if sshpass && *word == "-p" {
                edits.extend(
                    next.map(|(next_at, next)| (next_at, next_at + next.len(), MASK.to_owned())),
                );
            } else if curl {
                edits.extend(curl_user_password(at, word, next));
            }
        }
    }
    edits.retain(|(start, end, _)| !text[*start..*end].contains(MASK));
    apply(text, &edits)
}

/// The password of curl's `-u user:pass` (`--user`, `-uuser:pass`,
/// `--user=user:pass`).
fn curl_user_password(at: usize, word: &str, next: Option<(usize, &str)>) -> Option<Edit> {
    let (value_at, value) = match word {
        "-u" | "--user" => next?,
        _ => {
            let glued = word
                .strip_prefix("--user=")
                .or_else(|| word.strip_prefix("-u").filter(|_| !word.starts_with("--")))?;
            (at + word.len() - glued.len(), glued)
        }
    };
    let value = value.trim_end_matches(['\'', '"']);
    let colon = value.find(':')?;
    (colon + 1 < value.len()).then(|| {
        (
            value_at + colon + 1,
            value_at + value.len(),
            MASK.to_owned(),
        )
    })
}

/// The simple commands of a text: the pieces between `;`, `|`, `&` and
/// line ends, each with where it starts.
fn segments(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut start = 0;
    text.split(['\n', ';', '|', '&']).map(move |segment| {
        let at = start;
        start += segment.len() + 1;
        (at, segment)
    })
}

/// The words of a command (split at spaces and tabs), each with where it
/// starts.
fn words_of_command(segment: &str) -> Vec<(usize, &str)> {
    let mut words = Vec::new();
    let mut start = None;
    for (at, c) in segment.char_indices().chain([(segment.len(), ' ')]) {
        match (c == ' ' || c == '\t' || c == '\r', start) {
            (true, Some(from)) => {
                words.push((from, &segment[from..at]));
                start = None;
            }
            (false, None) => start = Some(at),
            _ => {}
        }
    }
    words
}

/// A word as a command name: `/usr/bin/mysql` → `mysql`, `$(curl` → `curl`.
fn command_name(word: &str) -> &str {
    let word = word.trim_matches(['"', '\'', '`', '$', '(', ')']);
    word.rsplit('/').next().unwrap_or(word)
}

/// Values of settings, headers and flags whose names say they are
/// secret: `NAME=value`, `NAME: value`, `"name": "value"`, `--name value`.
fn mask_named_values(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut edits: Vec<Edit> = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let found = match bytes[at] {
            b'=' | b':' => separated_value(text, at),
            b'-' if at + 1 < bytes.len()
                && bytes[at + 1] == b'-'
                && (at == 0 || bytes[at - 1].is_ascii_whitespace()) =>
            {
                flag_value(text, at)
            }
            _ => None,
        };
        match found {
            Some(edit) if edit.0 >= at => {
                at = edit.1;
                edits.push(edit);
            }
            _ => at += 1,
        }
    }
    apply(text, &edits)
}

/// Whether a byte may be part of a setting's or header's name.
fn is_name_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-' | b'.')
}

/// The value after the `=` or `:` at `at`, masked, when the name before it
/// is secret.
fn separated_value(text: &str, at: usize) -> Option<Edit> {
    let bytes = text.as_bytes();
    let separator = bytes[at];
    let after = bytes.get(at + 1).copied();
    if separator == b'=' && after == Some(b'=') {
        return None;
    }
    if separator == b':' && matches!(after, Some(b':' | b'/')) {
        return None;
    }
    let quote = at
        .checked_sub(1)
        .map(|before| bytes[before])
        .filter(|byte| matches!(byte, b'"' | b'\''));
    let name_end = at - usize::from(quote.is_some());
    let name_start = bytes[..name_end]
        .iter()
        .rposition(|byte| !is_name_byte(*byte))
        .map_or(0, |before| before + 1);
    let name = &text[name_start..name_end];
    let quoted_name = quote.is_some() && name_start > 0 && Some(bytes[name_start - 1]) == quote;
    if !is_secret_name(name) {
        return None;
    }
    let mut start = at + 1;
    if separator == b':' {
        start += text[start..]
            .find(|c: char| c != ' ' && c != '\t')
            .unwrap_or(text.len() - start);
    }
    let edit = value_edit(text, start, is_authorization(name))?;
    let unquoted = !matches!(bytes.get(start), Some(b'"' | b'\''));
    // `"name": value` is code or JSON: only a quoted value is a literal.
    // `token: str,` is a type, not a value.
    if unquoted && (quoted_name || (separator == b':' && is_followed_by_code(text, edit.1))) {
        return None;
    }
    Some(edit)
}

/// The value after a `--name` flag at `at` (`--token abc`), masked, when the
/// name is secret.
fn flag_value(text: &str, at: usize) -> Option<Edit> {
    let bytes = text.as_bytes();
    let name_end = bytes[at..]
        .iter()
        .position(|byte| !is_name_byte(*byte))
        .map_or(bytes.len(), |end| at + end);
    let name = &text[at..name_end];
    if !matches!(bytes.get(name_end), Some(b' ' | b'\t')) || !is_secret_name(name) {
        return None;
    }
    let start = name_end
        + text[name_end..]
            .find(|c: char| c != ' ' && c != '\t')
            .unwrap_or(text.len() - name_end);
    if bytes.get(start) == Some(&b'-') {
        return None;
    }
    value_edit(text, start, false)
}

/// The mask of the value starting at `start`: a quoted value whole, an
/// unquoted one up to a space or a shell or JSON delimiter. An
/// authorization's scheme (`Basic`, `Bearer`, `token`) is kept. `None`
/// when there is no value, it is already masked or it names a variable
/// (`$TOKEN`).
fn value_edit(text: &str, start: usize, authorization: bool) -> Option<Edit> {
    let rest = &text[start..];
    let (inner_start, inner) = match rest.chars().next()? {
        quote @ ('"' | '\'') => {
            let body = &rest[1..];
            let line = &body[..body.find('\n').unwrap_or(body.len())];
            match line.find(quote) {
                Some(end) => (start + 1, &line[..end]),
                None => (start + 1, unquoted_value(line, authorization)),
            }
        }
        _ => (start, unquoted_value(rest, authorization)),
    };
    let scheme = authorization
        .then(|| inner.split_once(' '))
        .flatten()
        .filter(|(scheme, value)| {
            scheme.chars().all(|c| c.is_ascii_alphabetic()) && !value.trim().is_empty()
        })
        .map_or(0, |(scheme, _)| scheme.len() + 1);
    let value = &inner[scheme..];
    let plain = !value.contains(|c: char| c.is_alphanumeric());
    if plain || value.trim_start().starts_with('$') || value.contains(MASK) {
        return None;
    }
    let value_start = inner_start + scheme;
    Some((value_start, value_start + value.len(), MASK.to_owned()))
}

/// An unquoted value at the start of `text`: up to a space or a
/// delimiter; for an authorization, its scheme and the word after it.
fn unquoted_value(text: &str, authorization: bool) -> &str {
    let end_of = |text: &str| {
        text.find(|c: char| {
            c.is_whitespace()
                || matches!(
                    c,
                    '"' | '\'' | ',' | ';' | '&' | '|' | ')' | '}' | ']' | '<' | '>' | '`'
                )
        })
        .unwrap_or(text.len())
    };
    let first = end_of(text);
    if !authorization || !text[..first].chars().all(|c| c.is_ascii_alphabetic()) {
        return &text[..first];
    }
    let spaces = text[first..]
        .find(|c: char| c != ' ')
        .unwrap_or(text.len() - first);
    let second = first + spaces;
    &text[..second + end_of(&text[second..])]
}

/// Whether what follows a value at `end` makes it code (`token: str,`,
/// `password: String)`, `api_key: str = ""`).
fn is_followed_by_code(text: &str, end: usize) -> bool {
    text[end..]
        .trim_start_matches([' ', '\t'])
        .starts_with([',', ')', '=', '{', '<', '>', ';'])
}

/// Whether a header's name is an authorization (`Authorization`,
/// `Proxy-Authorization`), whose value starts with a scheme.
fn is_authorization(name: &str) -> bool {
    name.to_ascii_lowercase().ends_with("authorization")
}

/// Whether a name says its value is secret: one of its words is
/// [`SECRET_WORDS`] or ends with one of [`SECRET_ENDINGS`], and its last
/// word does not make it a pointer or a description
/// ([`NOT_SECRET_LAST_WORDS`]). `key` alone, an ordinary key
/// ([`ORDINARY_KEYS`]), `PWD` (the working directory), `--no-…` and
/// `--ask-…` (switches) are not secret.
fn is_secret_name(name: &str) -> bool {
    let words = name_words(name);
    let (Some(first), Some(last)) = (words.first(), words.last()) else {
        return false;
    };
    if words.len() == 1 && matches!(first.as_str(), "key" | "pwd") {
        return false;
    }
    if matches!(first.as_str(), "no" | "ask") || NOT_SECRET_LAST_WORDS.contains(&last.as_str()) {
        return false;
    }
    words.iter().enumerate().any(|(n, word)| {
        let ordinary_key = word == "key" && n > 0 && ORDINARY_KEYS.contains(&words[n - 1].as_str());
        !ordinary_key
            && (SECRET_WORDS.contains(&word.as_str())
                || SECRET_ENDINGS.iter().any(|ending| word.ends_with(ending)))
    })
}

/// A name's words, lower case: split at anything but letters and digits
/// and where a lower-case letter meets a capital (`authToken`).
fn name_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        let boundary = !c.is_ascii_alphanumeric() || (previous_lower && c.is_ascii_uppercase());
        if boundary && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        if c.is_ascii_alphanumeric() {
            word.push(c.to_ascii_lowercase());
        }
        previous_lower = c.is_ascii_lowercase();
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// PEM private key blocks replaced by their first line and a note.
fn mask_private_keys(text: &str) -> String {
    const BEGIN: &str = "-----BEGIN ";
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(BEGIN) {
        let block = &rest[at..];
        let line_end = block.find('\n').unwrap_or(block.len());
        let first = &block[..line_end];
        if !first.contains("PRIVATE KEY-----") {
            out.push_str(&rest[..at + BEGIN.len()]);
            rest = &rest[at + BEGIN.len()..];
            continue;
        }
        out.push_str(&rest[..at]);
        out.push_str(first);
        out.push_str("\n(private key not shown)");
        rest = match block.find("-----END ") {
            Some(end) => {
                let after = &block[end..];
                let end_line = after.find('\n').unwrap_or(after.len());
                out.push('\n');
                out.push_str(&after[..end_line]);
                &after[end_line..]
            }
            None => "",
        };
    }
    out.push_str(rest);
    out
}
