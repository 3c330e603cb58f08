//! Text inside HTML (the web page, an email's HTML part).

/// `text` safe as HTML content and inside a quoted attribute value: `&`,
/// `<`, `>`, `"` and `'` as character references.
pub fn html_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::html_escape;

    #[test]
    fn html_escape_makes_the_five_markup_characters_references() {
        assert_eq!(
            html_escape(r#"<a href="x">'&'</a> 中文"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt; 中文"
        );
        assert_eq!(html_escape("plain"), "plain");
    }
}
