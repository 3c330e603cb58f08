//! `askbridge`: the command line. Parses arguments, reads files, prints
//! results and sets the exit code; the work happens in the library.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use askbridge::commands::{self, render::RenderChannel};
use askbridge_core::render::{Locale, Mode};
use clap::{Parser, Subcommand};

/// askbridge — ask a person a few structured questions from an AI agent.
#[derive(Debug, Parser)]
#[command(name = "askbridge", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the daemon: HTTP API, MCP at /mcp, the web page at /.
    Serve(commands::serve::ServeArgs),
    /// Check the setup before serving: config, database, each platform's token (exit 1 when a check fails).
    Check(commands::check::CheckArgs),
    /// Serve MCP on stdio, for agent hosts (Claude Code, Codex, Cursor).
    Mcp(commands::mcp::McpArgs),
    /// Ask from the shell and print the outcome JSON (exit 0 answered, 2 no answer).
    Ask(commands::ask::AskArgs),
    /// Answer a coding agent's hook (Claude Code, Codex, Copilot CLI, Cursor) from a chat: reads the event on stdin, prints the decision (nothing when there is none).
    Hook(commands::hook::HookArgs),
    /// Install, uninstall or show askbridge's hooks in Claude Code's, Codex's, Copilot CLI's or Cursor's settings.
    #[command(subcommand)]
    Hooks(commands::hooks::HooksCommand),
    /// Check an ask in any dialect and print the canonical ask (exit 1 when invalid).
    Normalize {
        /// JSON of any dialect, or assistant text with an agent-choice block
        /// or an A/B/C list; `-` for standard input.
        #[arg(default_value = "-")]
        file: PathBuf,
    },
    /// Show how a typed reply resolves.
    Resolve(ResolveArgs),
    /// Print what a channel would be sent for an ask.
    Render {
        /// The channel to draw for.
        #[arg(long, value_enum, default_value = "text")]
        channel: RenderChannel,
        /// Language of askbridge's own words: en, zh-CN or th.
        #[arg(long, default_value = "en", value_parser = parse_locale)]
        locale: Locale,
        /// Render mode of a chat channel: buttons, text or rich.
        #[arg(long, default_value = "buttons", value_parser = parse_mode)]
        mode: Mode,
        /// Draw the ask's reminders instead (`remindAfterSeconds`): what
        /// each place is sent while nobody answers, in order.
        #[arg(long)]
        reminders: bool,
        /// The ask, in any dialect; `-` for standard input.
        #[arg(default_value = "-")]
        file: PathBuf,
    },
}

#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["jsonl", "options", "option", "ask"])))]
struct ResolveArgs {
    /// Read JSON lines `{"options", "multi", "letters", "reply"}` from the
    /// file (or standard input) and write one resolution per line.
    #[arg(long)]
    jsonl: bool,
    /// Comma-separated option labels.
    #[arg(long, value_delimiter = ',')]
    options: Vec<String>,
    /// One option label (repeat it; for labels that contain commas).
    #[arg(long)]
    option: Vec<String>,
    /// Options may be chosen together.
    #[arg(long)]
    multi: bool,
    /// Options were shown as letters (A. B. C.).
    #[arg(long)]
    letters: bool,
    /// An ask file (any dialect): resolve a reply to all its questions.
    #[arg(long)]
    ask: Option<PathBuf>,
    /// The reply, or with --jsonl the input file (`-` or absent: standard input).
    reply: Option<String>,
}

fn parse_locale(text: &str) -> Result<Locale, String> {
    Locale::parse(text).ok_or_else(|| format!("unknown locale {text:?}; expected en, zh-CN or th"))
}

fn parse_mode(text: &str) -> Result<Mode, String> {
    Mode::parse(text)
        .ok_or_else(|| format!("unknown mode {text:?}; expected buttons, text or rich"))
}

/// jemalloc rather than the system allocator: each waiting agent holds an
/// HTTP connection whose buffers (hyper reserves 8 KB for reading and
/// 8 KB for writing) stay mostly unused while it waits. jemalloc keeps
/// its bookkeeping outside the blocks it hands out, so the untouched pages
/// of those buffers never become resident; glibc's allocator writes a
/// header into every block.
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's options, read before `main` (`_RJEM_MALLOC_CONF` in the
/// environment still overrides them). Blocks of 8 KB and more skip the
/// per-thread cache and freed pages go back to the system at once, so a
/// connection's buffers start on untouched pages rather than on pages an
/// earlier request dirtied. At 10,000 waiting connections that is about
/// 8 KB each instead of 11 KB, at no cost in throughput
/// (`cargo bench -p askbridge --bench load`).
#[cfg(not(target_env = "msvc"))]
// SAFETY: jemalloc reads this symbol as a `const char *`; it is a
// NUL-terminated byte string that lives for the whole program.
#[allow(unsafe_code)]
#[unsafe(export_name = "_rjem_malloc_conf")]
static ALLOCATOR_OPTIONS: &[u8; 51] = b"dirty_decay_ms:0,muzzy_decay_ms:0,lg_tcache_max:12\0";

fn main() -> ExitCode {
    let result = match Cli::parse().command {
        Command::Serve(args) => block_on(commands::serve::run(args)).map(|()| ExitCode::SUCCESS),
        Command::Check(args) => block_on(commands::check::run(args)).map(exit),
        Command::Mcp(args) => block_on(commands::mcp::run(args)).map(|()| ExitCode::SUCCESS),
        Command::Ask(args) => block_on(commands::ask::run(args)).map(ExitCode::from),
        Command::Hook(args) => block_on(commands::hook::run(args)).map(|()| ExitCode::SUCCESS),
        Command::Hooks(command) => {
            block_on(commands::hooks::run(command, &mut std::io::stdout().lock()))
                .map(|()| ExitCode::SUCCESS)
        }
        Command::Normalize { file } => normalize(&file),
        Command::Resolve(args) => resolve(args, &mut std::io::stdout().lock()),
        Command::Render {
            channel,
            locale,
            mode,
            reminders,
            file,
        } => render(channel, locale, mode, reminders, &file),
    };
    match result {
        Ok(code) => code,
        // The reader went away (`| head -c1`): nothing more to say to it.
        Err(error) if is_closed_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("askbridge: {error:#}");
            ExitCode::from(2)
        }
    }
}

/// Whether `error` is a write to a pipe whose reader has gone.
fn is_closed_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Writes `text` and a newline to standard output, an error (not a panic,
/// as `println!` would) when it cannot.
fn print_line(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}")?;
    out.flush()?;
    Ok(())
}

/// Runs an async command on a multi-threaded runtime.
fn block_on<T>(future: impl std::future::Future<Output = anyhow::Result<T>>) -> anyhow::Result<T> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?
        .block_on(future)
}

fn normalize(file: &std::path::Path) -> anyhow::Result<ExitCode> {
    let input = read(file)?;
    let (report, valid) = commands::normalize::run(&input);
    print_line(&serde_json::to_string_pretty(&report)?)?;
    Ok(exit(valid))
}

fn render(
    channel: RenderChannel,
    locale: Locale,
    mode: Mode,
    reminders: bool,
    file: &std::path::Path,
) -> anyhow::Result<ExitCode> {
    let input = read(file)?;
    let drawn = if reminders {
        commands::render::run_reminders(&input, channel, locale)
    } else {
        commands::render::run(&input, channel, locale, mode)
    };
    match drawn {
        Ok(text) => {
            print_line(&text)?;
            Ok(ExitCode::SUCCESS)
        }
        Err(report) => {
            print_line(&serde_json::to_string_pretty(&report)?)?;
            Ok(ExitCode::FAILURE)
        }
    }
}

fn resolve(args: ResolveArgs, out: &mut impl Write) -> anyhow::Result<ExitCode> {
    if args.jsonl {
        let path = PathBuf::from(args.reply.as_deref().unwrap_or("-"));
        let mut out = std::io::BufWriter::new(out);
        let all_ok = if path.as_os_str() == "-" {
            commands::resolve::jsonl(std::io::stdin().lock(), &mut out)
        } else {
            let file = std::fs::File::open(&path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            commands::resolve::jsonl(std::io::BufReader::new(file), &mut out)
        }
        .with_context(|| format!("cannot resolve the lines of {}", path.display()))?;
        out.flush()?;
        return Ok(exit(all_ok));
    }
    let Some(reply) = args.reply else {
        bail!("give the reply to resolve as the last argument");
    };
    if let Some(ask_path) = args.ask {
        let input = read(&ask_path)?;
        let ask = match askbridge_core::normalize::normalize_input(&input) {
            Ok(normalized) => normalized.ask,
            Err(errors) => {
                let listed: Vec<String> = errors.iter().map(ToString::to_string).collect();
                bail!(
                    "{} is not a valid ask:\n  {}",
                    ask_path.display(),
                    listed.join("\n  ")
                );
            }
        };
        let resolved = commands::resolve::against_ask(&ask, &reply);
        writeln!(out, "{}", serde_json::to_string(&resolved)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let labels: Vec<&str> = args
        .options
        .iter()
        .chain(&args.option)
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .collect();
    if labels.is_empty() {
        bail!("--options needs at least one label");
    }
    let resolved = commands::resolve::one(&labels, args.multi, args.letters, &reply);
    writeln!(out, "{}", serde_json::to_string(&resolved)?)?;
    Ok(ExitCode::SUCCESS)
}

fn read(path: &std::path::Path) -> anyhow::Result<String> {
    commands::read_input(path).with_context(|| format!("cannot read {}", path.display()))
}

fn exit(success: bool) -> ExitCode {
    if success {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
