//! Question ids and header chips: deriving, cutting and de-duplicating them.

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

use crate::model::limits::MAX_HEADER_CHARS;

/// Longest derived id, in characters.
const MAX_DERIVED_ID_CHARS: usize = 32;

/// A snake_case id from free text, ASCII-folded (`Größe` → `grosse`,
/// `Déploiement` → `deploiement`, `DeployTarget` → `deploy_target`);
/// empty when the text has no ASCII letter or digit. Starts with a letter.
pub(crate) fn snake_id(text: &str) -> String {
    let mut out = String::new();
    let mut gap = false;
    let mut prev_lower = false;
    for c in text.nfkd().filter(|&c| !is_combining_mark(c)) {
        let folded: &str = match c {
            'ß' => "ss",
            'æ' | 'Æ' => "ae",
            'œ' | 'Œ' => "oe",
            'ø' | 'Ø' => "o",
            'đ' | 'Đ' | 'ð' | 'Ð' => "d",
            'ł' | 'Ł' => "l",
            'þ' | 'Þ' => "th",
            'ı' => "i",
            _ => "",
        };
        let mut push = |c: char, out: &mut String| {
            if c.is_ascii_alphanumeric() {
                if (gap || (c.is_ascii_uppercase() && prev_lower)) && !out.is_empty() {
                    out.push('_');
                }
                gap = false;
                prev_lower = c.is_ascii_lowercase();
                out.push(c.to_ascii_lowercase());
            } else {
                gap = true;
                prev_lower = false;
            }
        };
        if folded.is_empty() {
            push(c, &mut out);
        } else {
            folded.chars().for_each(|c| push(c, &mut out));
        }
        if out.len() > MAX_DERIVED_ID_CHARS * 2 {
            break;
        }
    }
    let mut id = cut_at(&out, MAX_DERIVED_ID_CHARS, '_', 8);
    if id.starts_with(|c: char| c.is_ascii_digit()) {
        id.insert_str(0, "q_");
    }
    id
}

/// `base`, or `base_2`, `base_3`, … — the first that `taken` does not hold.
pub(crate) fn unique(base: &str, taken: &[String]) -> String {
    if !taken.iter().any(|t| t == base) {
        return base.to_owned();
    }
    (2..=taken.len() + 2)
        .map(|n| format!("{base}_{n}"))
        .find(|candidate| !taken.iter().any(|t| t == candidate))
        .unwrap_or_else(|| format!("{base}_{}", taken.len() + 3))
}

/// A header chip from a question text: its first words that fit in 12
/// characters, without trailing punctuation; the first 12 characters when
/// the first word alone is longer (Chinese, Japanese and Thai have no spaces).
pub(crate) fn derive_header(text: &str) -> String {
    let mut header = String::new();
    for word in text.split_whitespace() {
        let word = word.trim_matches(is_edge_punctuation);
        if word.is_empty() {
            continue;
        }
        let sep = usize::from(!header.is_empty());
        if header.chars().count() + sep + word.chars().count() > MAX_HEADER_CHARS {
            if header.is_empty() {
                header = word.chars().take(MAX_HEADER_CHARS).collect();
            }
            break;
        }
        if sep == 1 {
            header.push(' ');
        }
        header.push_str(word);
    }
    let header = header.trim_matches(is_edge_punctuation);
    if header.is_empty() {
        "Question".to_owned()
    } else {
        header.to_owned()
    }
}

/// Cuts a header to 12 characters, at a word boundary when one is near.
pub(crate) fn cut_header(header: &str) -> String {
    cut_at(header, MAX_HEADER_CHARS, ' ', 4)
        .trim_end()
        .to_owned()
}

/// Cuts `text` to at most `max` characters. When the cut falls inside a
/// word and a `boundary` character lies at or after character `min_keep`,
/// cuts there instead. Trailing `boundary` characters are removed.
fn cut_at(text: &str, max: usize, boundary: char, min_keep: usize) -> String {
    let trimmed = text.trim_end_matches(boundary);
    if trimmed.chars().count() <= max {
        return trimmed.to_owned();
    }
    let head: String = trimmed.chars().take(max).collect();
    let next = trimmed.chars().nth(max);
    let mid_word = next.is_some_and(|c| c != boundary);
    let cut = if mid_word {
        match head.char_indices().rfind(|&(_, c)| c == boundary) {
            Some((at, _)) if head[..at].chars().count() >= min_keep => head[..at].to_owned(),
            _ => head,
        }
    } else {
        head
    };
    cut.trim_end_matches(boundary).to_owned()
}

/// Punctuation trimmed from the ends of derived headers.
fn is_edge_punctuation(c: char) -> bool {
    matches!(
        c,
        '?' | '!'
            | '.'
            | ','
            | ':'
            | ';'
            | '*'
            | '_'
            | '#'
            | '`'
            | '"'
            | '\''
            | '…'
            | '？'
            | '！'
            | '。'
            | '，'
            | '：'
            | '；'
            | '、'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snake_ids() {
        let cases = [
            ("Deploy", "deploy"),
            ("Deploy target", "deploy_target"),
            ("DeployTarget", "deploy_target"),
            (
                "Where should I deploy the build?",
                "where_should_i_deploy_the_build",
            ),
            ("Déploiement", "deploiement"),
            ("Größe", "grosse"),
            ("部署", ""),
            ("部署 target", "target"),
            ("2FA method", "q_2fa_method"),
            ("  --Hello--World--  ", "hello_world"),
            (
                "a very long header that goes on and on and on",
                "a_very_long_header_that_goes_on",
            ),
        ];
        for (input, expect) in cases {
            assert_eq!(snake_id(input), expect, "{input}");
        }
    }

    #[test]
    fn headers() {
        assert_eq!(
            derive_header("Where should I deploy the build?"),
            "Where should"
        );
        assert_eq!(derive_header("Which database?"), "Which");
        assert_eq!(derive_header("Deploy?"), "Deploy");
        assert_eq!(
            derive_header("你想把构建部署到哪里？"),
            "你想把构建部署到哪里"
        );
        assert_eq!(derive_header("Supercalifragilistic"), "Supercalifra");
        assert_eq!(derive_header("???"), "Question");
        assert_eq!(cut_header("Deployment target"), "Deployment");
        assert_eq!(cut_header("Notifications"), "Notification");
        assert_eq!(cut_header("Short"), "Short");
        assert_eq!(cut_header("ab cdefghijklmnop"), "ab cdefghijk");
    }

    #[test]
    fn unique_ids() {
        let taken = vec!["a".to_owned(), "a_2".to_owned()];
        assert_eq!(unique("a", &taken), "a_3");
        assert_eq!(unique("b", &taken), "b");
    }
}
