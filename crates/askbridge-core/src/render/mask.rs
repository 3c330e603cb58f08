//! Masking what looks like a credential in what a chat shows: an agent's
//! context block may hold a command line with a token in it. What the
//! agent gets back is never masked.

/// Prefixes of tokens masked in what a chat shows.
const SECRET_PREFIXES: [&str; 10] = [
    "sk-",
    "ghp_",
    "gho_",
    "ghs_",
    "github_pat_",
    "xoxb-",
    "xoxp-",
    "xoxa-",
    "xoxs-",
    "AKIA",
];

/// Shortest token after a prefix that is taken for a credential.
const SECRET_MIN_CHARS: usize = 8;

/// `text` with values that look like credentials masked (the prefix kept,
/// so the person still sees what kind it was): API keys and tokens by
/// their prefixes, `Bearer` tokens and PEM private keys.
pub fn mask_credentials(text: &str) -> String {
    let text = mask_private_keys(text);
    let mut out = String::with_capacity(text.len());
    let mut after_bearer = false;
    let mut rest = text.as_str();
    while !rest.is_empty() {
        let start = rest.find(is_token_char).unwrap_or(rest.len());
        out.push_str(&rest[..start]);
        rest = &rest[start..];
        let end = rest.find(|c: char| !is_token_char(c)).unwrap_or(rest.len());
        let token = &rest[..end];
        rest = &rest[end..];
        if token.is_empty() {
            continue;
        }
        if after_bearer && token.chars().count() >= SECRET_MIN_CHARS {
            out.push_str("••••••");
        } else if let Some(prefix) = SECRET_PREFIXES.iter().find(|prefix| {
            token.starts_with(**prefix) && token.len() >= prefix.len() + SECRET_MIN_CHARS
        }) {
            out.push_str(prefix);
            out.push_str("••••••");
        } else {
            out.push_str(token);
        }
        after_bearer = token.eq_ignore_ascii_case("bearer");
    }
    out
}

fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '+' | '/')
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
