//! A conservative reading of a shell command line: the simple commands it
//! runs, each as its words after quote removal, and whether each is plain
//! enough for an `allow` rule to vouch for it.
//!
//! This is not a shell. It knows what POSIX shells and bash split commands
//! at (`;`, `&&`, `||`, `|`, `|&`, `&`, newlines, `(` `)`), what quotes
//! and backslashes do to a word, and what makes a command do more than its
//! words say: command and process substitution (`$(…)`, backticks,
//! `<(…)`, `>(…)`), parameter expansion with braces (`${…}`, which can
//! hide a substitution), ANSI-C and locale quoting (`$'…'`, `$"…"`),
//! redirections, heredocs and subshells. A simple command with any of
//! those is *unclean*: it still counts for `deny` and `ask` rules (the
//! commands inside a substitution are read out as commands of their own),
//! but no `allow` rule other than the whole tool vouches for it. Only two
//! redirections stay clean, because they cannot write a file or feed the
//! command anything: duplicating a descriptor (`2>&1`) and writing to
//! `/dev/null`.

/// The simple commands of a command line, substitutions' commands included.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct Lexed {
    pub parts: Vec<Part>,
    /// Each operator that split the line, with its position.
    pub separators: Vec<(usize, &'static str)>,
}

/// One simple command.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct Part {
    /// Its words after quote removal; a substitution stays as written.
    pub words: Vec<Word>,
    /// Where and why the command is unclean; `None` when it is plain.
    pub unclean: Option<(usize, &'static str)>,
}

impl Part {
    /// Its words as text.
    pub fn texts(&self) -> Vec<String> {
        self.words.iter().map(|word| word.text.clone()).collect()
    }
}

/// One word of a simple command.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct Word {
    pub text: String,
    /// Where it has an unquoted `*`, `?` or `[` (a glob), if it does.
    pub glob_at: Option<usize>,
    /// Whether any of it was quoted or escaped.
    pub quoted: bool,
}

/// A command line that could not be read (an unterminated quote, an
/// unbalanced substitution): no `allow` rule vouches for any of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ShellError {
    pub at: usize,
    pub problem: &'static str,
}

/// How deep substitutions may nest before the line counts as unreadable.
const MAX_DEPTH: u8 = 8;

/// Reads a command line.
pub(super) fn lex(line: &str) -> Result<Lexed, ShellError> {
    let chars: Vec<char> = line.chars().collect();
    lex_chars(&chars, 0, 0)
}

fn lex_chars(chars: &[char], base: usize, depth: u8) -> Result<Lexed, ShellError> {
    if depth > MAX_DEPTH {
        return Err(ShellError {
            at: base,
            problem: "substitutions nested too deeply",
        });
    }
    let mut lexer = Lexer {
        chars,
        base,
        depth,
        i: 0,
        part: Part::default(),
        word: None,
        redirect: None,
        grouped: None,
        out: Lexed::default(),
        nested: Vec::new(),
    };
    lexer.run()?;
    let Lexer {
        mut out,
        nested,
        grouped,
        ..
    } = lexer;
    if let Some(at) = grouped {
        for part in &mut out.parts {
            part.unclean.get_or_insert((at, "a subshell or group `(`"));
        }
    }
    out.parts.extend(nested);
    Ok(out)
}

/// A redirection waiting for its target word.
#[derive(Debug, Clone, Copy)]
enum Redirect {
    /// `>`, `>>`, `>|`, `&>`: clean only to `/dev/null`.
    Write(usize),
    /// `>&`, `<&`: clean only to a descriptor number or `-`.
    Duplicate(usize),
    /// `<`, `<>`, heredocs: never clean.
    Read(usize),
}

struct Lexer<'a> {
    chars: &'a [char],
    base: usize,
    depth: u8,
    i: usize,
    part: Part,
    word: Option<Word>,
    redirect: Option<Redirect>,
    grouped: Option<usize>,
    out: Lexed,
    /// The commands read out of substitutions.
    nested: Vec<Part>,
}

impl Lexer<'_> {
    fn at(&self, i: usize) -> usize {
        self.base + i
    }

    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.i + ahead).copied()
    }

    fn word(&mut self) -> &mut Word {
        self.word.get_or_insert_with(Word::default)
    }

    fn taint(&mut self, at: usize, why: &'static str) {
        let at = self.at(at);
        self.part.unclean.get_or_insert((at, why));
    }

    fn finish_word(&mut self) {
        let Some(word) = self.word.take() else {
            return;
        };
        match self.redirect.take() {
            None => self.part.words.push(word),
            Some(Redirect::Write(at)) => {
                if word.text != "/dev/null" {
                    self.taint(at, "a redirection");
                }
            }
            Some(Redirect::Duplicate(at)) => {
                let descriptor = word.text == "-" || word.text.chars().all(|c| c.is_ascii_digit());
                if !descriptor || word.text.is_empty() {
                    self.taint(at, "a redirection");
                }
            }
            Some(Redirect::Read(at)) => self.taint(at, "a redirection"),
        }
    }

    fn finish_part(&mut self) {
        self.finish_word();
        if let Some(Redirect::Write(at) | Redirect::Duplicate(at) | Redirect::Read(at)) =
            self.redirect.take()
        {
            self.taint(at, "a redirection");
        }
        let part = std::mem::take(&mut self.part);
        if !part.words.is_empty() || part.unclean.is_some() {
            self.out.parts.push(part);
        }
    }

    fn separate(&mut self, operator: &'static str, len: usize) {
        self.finish_part();
        let at = self.at(self.i);
        self.out.separators.push((at, operator));
        self.i += len;
    }

    fn run(&mut self) -> Result<(), ShellError> {
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' | '\r' => {
                    self.finish_word();
                    self.i += 1;
                }
                '\n' => self.separate("a newline", 1),
                ';' => self.separate(";", 1),
                '&' => match self.peek(1) {
                    Some('&') => self.separate("&&", 2),
                    Some('>') => {
                        self.finish_word();
                        let at = self.i;
                        self.i += if self.peek(2) == Some('>') { 3 } else { 2 };
                        self.redirect = Some(Redirect::Write(at));
                    }
                    _ => self.separate("&", 1),
                },
                '|' => match self.peek(1) {
                    Some('|') => self.separate("||", 2),
                    Some('&') => self.separate("|&", 2),
                    _ => self.separate("|", 1),
                },
                '(' | ')' => {
                    self.grouped.get_or_insert(self.at(self.i));
                    self.separate(if c == '(' { "(" } else { ")" }, 1);
                }
                '<' | '>' => self.redirection(c)?,
                '#' if self.word.is_none() => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.i += 1;
                    }
                }
                '\\' => match self.peek(1) {
                    Some('\n') => self.i += 2,
                    Some(next) => {
                        let word = self.word();
                        word.text.push(next);
                        word.quoted = true;
                        self.i += 2;
                    }
                    None => {
                        self.word().text.push('\\');
                        self.i += 1;
                    }
                },
                '\'' => self.single_quoted()?,
                '"' => self.double_quoted()?,
                '`' => self.backticks()?,
                '$' => self.dollar()?,
                '*' | '?' | '[' => {
                    let at = self.at(self.i);
                    let word = self.word();
                    word.glob_at.get_or_insert(at);
                    word.text.push(c);
                    self.i += 1;
                }
                _ => {
                    self.word().text.push(c);
                    self.i += 1;
                }
            }
        }
        self.finish_part();
        Ok(())
    }

    fn redirection(&mut self, c: char) -> Result<(), ShellError> {
        // `2>`: digits right before the operator name a descriptor.
        if self
            .word
            .as_ref()
            .is_some_and(|w| !w.quoted && w.text.chars().all(|c| c.is_ascii_digit()))
        {
            self.word = None;
        }
        self.finish_word();
        let at = self.i;
        if self.peek(1) == Some('(') {
            // Process substitution: a command of its own.
            self.i += 1;
            self.substitution(at, ('(', ')'), "a process substitution")?;
            return Ok(());
        }
        let (len, redirect) = match (c, self.peek(1), self.peek(2)) {
            ('>', Some('&'), _) => (2, Redirect::Duplicate(at)),
            ('>', Some('>' | '|'), _) => (2, Redirect::Write(at)),
            ('>', _, _) => (1, Redirect::Write(at)),
            ('<', Some('&'), _) => (2, Redirect::Duplicate(at)),
            ('<', Some('<'), Some('<' | '-')) => (3, Redirect::Read(at)),
            ('<', Some('<' | '>'), _) => (2, Redirect::Read(at)),
            _ => (1, Redirect::Read(at)),
        };
        if let Some(
            Redirect::Write(before) | Redirect::Duplicate(before) | Redirect::Read(before),
        ) = self.redirect.replace(redirect)
        {
            self.taint(before, "a redirection");
        }
        self.i += len;
        Ok(())
    }

    fn single_quoted(&mut self) -> Result<(), ShellError> {
        let start = self.i;
        let Some(end) = (start + 1..self.chars.len()).find(|&j| self.chars[j] == '\'') else {
            return Err(ShellError {
                at: self.at(start),
                problem: "unterminated quote",
            });
        };
        let text: String = self.chars[start + 1..end].iter().collect();
        let word = self.word();
        word.text.push_str(&text);
        word.quoted = true;
        self.i = end + 1;
        Ok(())
    }

    fn double_quoted(&mut self) -> Result<(), ShellError> {
        let start = self.i;
        self.word().quoted = true;
        self.i += 1;
        loop {
            match self.peek(0) {
                None => {
                    return Err(ShellError {
                        at: self.at(start),
                        problem: "unterminated quote",
                    });
                }
                Some('"') => {
                    self.i += 1;
                    return Ok(());
                }
                Some('\\') => match self.peek(1) {
                    Some('\n') => self.i += 2,
                    Some(next @ ('$' | '`' | '"' | '\\')) => {
                        self.word().text.push(next);
                        self.i += 2;
                    }
                    _ => {
                        self.word().text.push('\\');
                        self.i += 1;
                    }
                },
                Some('`') => self.backticks()?,
                Some('$') => self.dollar()?,
                Some(c) => {
                    self.word().text.push(c);
                    self.i += 1;
                }
            }
        }
    }

    /// `` `…` ``: the commands inside are read out; the word keeps the text.
    fn backticks(&mut self) -> Result<(), ShellError> {
        let start = self.i;
        let mut j = start + 1;
        loop {
            match self.chars.get(j) {
                None => {
                    return Err(ShellError {
                        at: self.at(start),
                        problem: "unterminated backtick",
                    });
                }
                Some('\\') => j += 2,
                Some('`') => break,
                Some(_) => j += 1,
            }
        }
        self.taint(start, "a command substitution");
        let inner = lex_chars(
            &self.chars[start + 1..j],
            self.at(start + 1),
            self.depth + 1,
        )?;
        self.nested.extend(inner.parts);
        let text: String = self.chars[start..=j].iter().collect();
        self.word().text.push_str(&text);
        self.i = j + 1;
        Ok(())
    }

    fn dollar(&mut self) -> Result<(), ShellError> {
        let start = self.i;
        match self.peek(1) {
            Some('(') => {
                self.i += 1;
                self.substitution(start, ('(', ')'), "a command substitution")
            }
            Some('{') => {
                self.i += 1;
                self.substitution(start, ('{', '}'), "a `${…}` expansion")
            }
            Some('\'' | '"' | '[') => {
                self.taint(start, "a `$'…'` or `$[…]` expansion");
                self.word().text.push('$');
                self.i += 1;
                Ok(())
            }
            _ => {
                self.word().text.push('$');
                self.i += 1;
                Ok(())
            }
        }
    }

    /// `$(…)`, `<(…)`, `>(…)`, `${…}` with `self.i` on the opening
    /// bracket of `brackets`: the commands inside are read out; the word
    /// keeps the text.
    fn substitution(
        &mut self,
        start: usize,
        (open, close): (char, char),
        why: &'static str,
    ) -> Result<(), ShellError> {
        let close = self.closing(self.i, open, close)?;
        self.taint(start, why);
        let inner = lex_chars(
            &self.chars[self.i + 1..close],
            self.at(self.i + 1),
            self.depth + 1,
        )?;
        self.nested.extend(inner.parts);
        let text: String = self.chars[start..=close].iter().collect();
        self.word().text.push_str(&text);
        self.i = close + 1;
        Ok(())
    }

    /// The index of the `close` matching the `open` at `from`, skipping
    /// quoted text and escapes.
    fn closing(&self, from: usize, open: char, close: char) -> Result<usize, ShellError> {
        let unbalanced = ShellError {
            at: self.at(from),
            problem: "unbalanced substitution",
        };
        let mut depth = 0usize;
        let mut j = from;
        while let Some(&c) = self.chars.get(j) {
            match c {
                '\\' => j += 1,
                '\'' => {
                    j += 1;
                    while self.chars.get(j).is_some_and(|&c| c != '\'') {
                        j += 1;
                    }
                }
                '"' => {
                    j += 1;
                    while let Some(&c) = self.chars.get(j) {
                        match c {
                            '\\' => j += 1,
                            '"' => break,
                            _ => {}
                        }
                        j += 1;
                    }
                }
                c if c == open => depth += 1,
                c if c == close => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return Ok(j);
                    }
                }
                _ => {}
            }
            j += 1;
        }
        Err(unbalanced)
    }
}

/// Words of a command line that could not be read, for `deny` and `ask`
/// rules only: split at blanks and operator characters, quotes dropped.
pub(super) fn rough_words(line: &str) -> Vec<String> {
    line.split(|c: char| c.is_whitespace() || ";&|()<>`$".contains(c))
        .map(|word| word.replace(['\'', '"', '\\'], ""))
        .filter(|word| !word.is_empty())
        .collect()
}
