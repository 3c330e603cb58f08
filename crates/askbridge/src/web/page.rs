//! The page in every language: `assets/index.html` with askbridge's own
//! words filled in for one locale, `<html lang>` set, and every locale's
//! phrases inline for the page's script and its language switch.
//!
//! The words are the core phrase table's ([`Strings`]), so each is
//! translated once for every channel. [`page_phrases`] lists the ones the
//! page uses, under their field names: the template writes `{name}` where
//! one goes (plus `{lang}` for the locale's tag and `{phrases}` for the
//! JSON), the script calls `t('name')`.
//!
//! Which language a request gets, in order: the page's own switch (the
//! script's, kept in `localStorage`; it overrides what is served), the
//! browser's `Accept-Language` ([`Locale::from_accept_language`]), the
//! configured `[web] locale`. Every page is built once, when the router is.

use askbridge_core::render::{Locale, Strings, fill, html_escape};
use axum::body::Bytes;
use serde_json::{Map, Value, json};

/// The page's template.
pub(super) const INDEX_HTML: &str = include_str!("assets/index.html");

/// `[("skip", s.skip), …]`: phrases of the table under their field names.
macro_rules! named {
    ($strings:expr; $($name:ident),* $(,)?) => {
        vec![$((stringify!($name), $strings.$name)),*]
    };
}

/// The phrases the page shows, as `(name, phrase)`: the shared buttons and
/// status words, and every `page_*` phrase.
pub(super) fn page_phrases(s: &'static Strings) -> Vec<(&'static str, &'static str)> {
    named!(s;
        other, skip, skip_question, yes, no, recommended, hint_optional,
        list_sep, sentence_sep, answered, answered_by_alone,
        answered_in_host_alone, skipped, expired,
        cancelled, delivery_failed, already_answered, still_open,
        page_connecting, page_live, page_offline, page_token_needed,
        page_language, page_conversation, page_empty_title, page_empty_body,
        page_noscript, page_reply, page_reply_to, page_no_questions,
        page_type_reply, page_type_reply_keyed, page_send, page_submit,
        page_next, page_back, page_sending, page_skip_title, page_question,
        page_questions_from_agent, page_question_n_of, page_n_questions, page_also_in,
        page_n_of_waiting, page_waiting_questions, page_newer, page_older,
        page_expand, page_collapse, page_expand_question,
        page_collapse_question, page_nothing_left, page_waiting_for_you,
        page_answered_mark, page_agent_at, page_write_own,
        page_write_answer, page_your_answer, page_choose_one, page_choose_some,
        page_write_or_skip, page_key_continue, page_key_submit,
        page_key_collapse, page_key_pick, page_answered_elsewhere,
        page_answered_on, page_answered_by_on, page_skipped_elsewhere,
        page_gone, page_ended, page_notice_answered, page_notice_ended,
        page_expiring, page_expires_soon, page_expires_min,
        page_expires_h_min, page_unreachable, page_needs_token,
        page_http_error, page_clarify, page_answer_again, still_waiting, passed_on,
        duration_min, duration_s, web_page,
    )
}

/// The page once per locale, and the locale for browsers that name none.
#[derive(Debug, Clone)]
pub struct Pages {
    /// One page per [`Locale::ALL`] entry.
    pages: Vec<(Locale, Bytes)>,
    /// The configured `[web] locale`.
    fallback: Locale,
}

impl Pages {
    /// Builds the page in every locale; `fallback` is `[web] locale`.
    pub fn new(fallback: Locale) -> Pages {
        let phrases = phrases_json();
        let pages = Locale::ALL
            .iter()
            .map(|&locale| (locale, Bytes::from(render(locale, &phrases))))
            .collect();
        Pages { pages, fallback }
    }

    /// The locale for a request with these `Accept-Language` values: the
    /// browser's preferred supported language, else the fallback.
    pub fn locale_for(&self, accept_language: &str) -> Locale {
        Locale::from_accept_language(accept_language).unwrap_or(self.fallback)
    }

    /// The page in `locale`.
    pub fn page(&self, locale: Locale) -> Bytes {
        self.pages
            .iter()
            .find(|(candidate, _)| *candidate == locale)
            .map(|(_, page)| page.clone())
            .unwrap_or_default()
    }
}

/// The template filled in for one locale.
fn render(locale: Locale, phrases_json: &str) -> String {
    let escaped: Vec<(&str, String)> = page_phrases(locale.strings())
        .into_iter()
        .map(|(name, phrase)| (name, html_escape(phrase)))
        .collect();
    let mut values: Vec<(&str, &str)> = escaped
        .iter()
        .map(|(name, phrase)| (*name, phrase.as_str()))
        .collect();
    values.push(("lang", locale.as_str()));
    values.push(("phrases", phrases_json));
    fill(INDEX_HTML, &values)
}

/// Every locale's phrases, as the script reads them from the page:
/// `{"locales": [{"tag": "en", "name": "English", "phrases": {…}}, …]}`,
/// in [`Locale::ALL`] order, safe inside `<script type="application/json">`.
fn phrases_json() -> String {
    let locales: Vec<Value> = Locale::ALL
        .iter()
        .map(|&locale| {
            let phrases: Map<String, Value> = page_phrases(locale.strings())
                .into_iter()
                .map(|(name, phrase)| (name.to_owned(), Value::from(phrase)))
                .collect();
            json!({"tag": locale.as_str(), "name": locale.name(), "phrases": phrases})
        })
        .collect();
    // `<` only occurs inside JSON strings, where `\u003c` means the same;
    // so `</script>` cannot end the block early.
    json!({ "locales": locales })
        .to_string()
        .replace('<', "\\u003c")
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::super::APP_JS;
    use super::*;

    /// The names inside `{…}` of a text (`{n} of {total}` → n, total).
    fn placeholders(text: &str) -> BTreeSet<&str> {
        text.split('{')
            .skip(1)
            .filter_map(|rest| rest.split_once('}').map(|(name, _)| name))
            .filter(|name| {
                !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            })
            .collect()
    }

    /// The phrase names the script looks up: `t('name'` (not `get('…'`).
    fn script_names() -> BTreeSet<&'static str> {
        APP_JS
            .match_indices("t('")
            .filter(|&(at, _)| {
                let before = APP_JS[..at].chars().next_back();
                !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.')
            })
            .filter_map(|(at, call)| {
                let rest = &APP_JS[at + call.len()..];
                rest.split_once('\'').map(|(name, _)| name)
            })
            .collect()
    }

    fn served_names() -> BTreeSet<&'static str> {
        page_phrases(Locale::En.strings())
            .into_iter()
            .map(|(name, _)| name)
            .collect()
    }

    #[test]
    fn every_phrase_the_page_uses_is_served_and_every_served_one_used() {
        let served = served_names();
        let template: BTreeSet<&str> = placeholders(INDEX_HTML)
            .into_iter()
            .filter(|name| !matches!(*name, "lang" | "phrases"))
            .collect();
        let script = script_names();
        assert!(
            script.len() > 50,
            "the script looks its words up: {script:?}"
        );
        for name in template.iter().chain(&script) {
            assert!(
                served.contains(name),
                "the page uses {name:?}, which is not served"
            );
        }
        for name in &served {
            assert!(
                template.contains(name) || script.contains(name),
                "{name:?} is served but the page never shows it"
            );
        }
    }

    #[test]
    fn every_page_only_phrase_of_the_table_is_served() {
        // `Strings` prints its fields as `name: "…"`.
        let table = format!("{:?}", Locale::En.strings());
        let served = served_names();
        let page_only = table
            .split([' ', '{', ','])
            .filter_map(|word| word.strip_suffix(':'))
            .filter(|name| name.starts_with("page_"));
        for name in page_only {
            assert!(
                served.contains(name),
                "Strings::{name} is not served to the page"
            );
        }
    }

    #[test]
    fn every_locale_fills_the_same_placeholders() {
        let english = page_phrases(Locale::En.strings());
        for locale in Locale::ALL {
            let phrases = page_phrases(locale.strings());
            for ((name, phrase), (_, english)) in phrases.iter().zip(&english) {
                assert_eq!(
                    placeholders(phrase),
                    placeholders(english),
                    "{locale} {name}: {phrase}"
                );
            }
        }
    }

    #[test]
    fn each_page_speaks_its_locale() {
        let pages = Pages::new(Locale::En);
        for locale in Locale::ALL {
            let page = pages.page(locale);
            let page = std::str::from_utf8(&page).expect("UTF-8");
            let s = locale.strings();
            assert!(
                page.contains(&format!("<html lang=\"{locale}\">")),
                "{locale}"
            );
            for phrase in [
                s.page_send,
                s.page_empty_title,
                s.page_noscript,
                s.page_connecting,
            ] {
                assert!(page.contains(phrase), "{locale}: {phrase}");
            }
            let (before, rest) = page
                .split_once("<script id=\"phrases\" type=\"application/json\">")
                .expect("the phrases block");
            let (json, after) = rest.split_once("</script>").expect("the block ends");
            for part in [before, after] {
                assert!(
                    !part.contains('{'),
                    "{locale}: a placeholder is left: {part}"
                );
            }
            let json: Value = serde_json::from_str(json).expect("the phrases are JSON");
            let tags: Vec<&str> = json["locales"]
                .as_array()
                .expect("locales")
                .iter()
                .map(|l| l["tag"].as_str().expect("tag"))
                .collect();
            assert_eq!(tags, ["en", "zh-CN", "th"]);
            assert_eq!(json["locales"][2]["phrases"]["skip"], "ข้าม");
            assert_eq!(json["locales"][1]["name"], "中文");
        }
    }

    #[test]
    fn the_browser_language_wins_over_the_fallback() {
        let pages = Pages::new(Locale::Th);
        let table = [
            ("", Locale::Th),
            ("fr-FR,fr;q=0.9", Locale::Th),
            ("zh-CN,zh;q=0.9,en;q=0.8", Locale::ZhCn),
            ("en-US,en;q=0.9", Locale::En),
            ("de, zh-Hans;q=0.5", Locale::ZhCn),
        ];
        for (header, expect) in table {
            assert_eq!(pages.locale_for(header), expect, "{header:?}");
        }
    }

    #[test]
    fn phrases_cannot_break_out_of_their_markup() {
        assert_eq!(
            html_escape(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
        let json = phrases_json();
        assert!(!json.contains('<'), "no `</script>` can occur in the block");
        let value: Value = serde_json::from_str(&json).expect("still JSON");
        assert_eq!(value["locales"][0]["phrases"]["page_send"], "Send");
    }

    #[test]
    fn the_script_has_no_english_phrase_of_its_own() {
        for (name, phrase) in page_phrases(Locale::En.strings()) {
            let literal = phrase.trim();
            if literal.len() < 4 {
                continue; // "No", "Yes", ", " are too short to tell apart from code
            }
            for quoted in [format!("'{literal}'"), format!("\"{literal}\"")] {
                assert!(
                    !APP_JS.contains(&quoted),
                    "app.js writes {name} ({literal:?}) itself"
                );
            }
        }
    }
}
