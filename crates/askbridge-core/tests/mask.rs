//! What a chat shows of a context block: credentials masked, the kind kept
//! (a prefix, a name, a scheme, a user), look-alikes left alone. Tables:
//! input → what a chat shows.

use askbridge_core::hooks::{HookEvent, Host};
use askbridge_core::normalize::normalize_input;
use askbridge_core::render::{Capabilities, Locale, context_blocks, mask_credentials};
use serde_json::json;

#[test]
fn common_secret_shapes_are_masked_with_their_kind_kept() {
    let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
    let rows = [
        // NAME=value, in every way a shell or a file writes it.
        (
            "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "export AWS_SECRET_ACCESS_KEY=••••••",
        ),
        (
            "GITHUB_TOKEN=abc123 gh pr create",
            "GITHUB_TOKEN=•••••• gh pr create",
        ),
        (
            "DB_PASSWORD=\"hunter 2\" ./migrate",
            "DB_PASSWORD=\"••••••\" ./migrate",
        ),
        (
            "PGPASSWORD='s3cret' psql app",
            "PGPASSWORD='••••••' psql app",
        ),
        ("MYSQL_PWD=s3cret mysql", "MYSQL_PWD=•••••• mysql"),
        ("+STRIPE_API_KEY=abc123", "+STRIPE_API_KEY=••••••"),
        ("  password: hunter2", "  password: ••••••"),
        ("client_secret: abc123\n", "client_secret: ••••••\n"),
        (
            "curl -d '{\"client_secret\":\"abc\",\"id\":\"x\"}' x",
            "curl -d '{\"client_secret\":\"••••••\",\"id\":\"x\"}' x",
        ),
        ("{\"authToken\": \"abc\"}", "{\"authToken\": \"••••••\"}"),
        (
            "curl 'https://x/api?access_token=abc123&page=2'",
            "curl 'https://x/api?access_token=••••••&page=2'",
        ),
        // --name=value and --name value.
        (
            "deploy --api-key=abc123 --env prod",
            "deploy --api-key=•••••• --env prod",
        ),
        (
            "vault login --token s.abcdef123 now",
            "vault login --token •••••• now",
        ),
        (
            "mysqldump --password=hunter2 app",
            "mysqldump --password=•••••• app",
        ),
        (
            "mysql --password hunter2 app",
            "mysql --password •••••• app",
        ),
        // -p glued to its flag (mysql style), sshpass -p.
        ("mysql -u root -phunter2 app", "mysql -u root -p•••••• app"),
        (
            "sshpass -p s3cret ssh pi@host",
            "sshpass -p •••••• ssh pi@host",
        ),
        (
            "docker login -u bob -p s3cret ghcr.io",
            "docker login -u bob -p •••••• ghcr.io",
        ),
        // curl's user:password.
        (
            "curl -u alice:s3cret https://x",
            "curl -u alice:•••••• https://x",
        ),
        (
            "curl --user 'alice:s3cret' https://x",
            "curl --user 'alice:••••••' https://x",
        ),
        // A URL's userinfo.
        (
            "git clone https://alice:s3cret@github.com/o/r.git",
            "git clone https://alice:••••••@github.com/o/r.git",
        ),
        (
            "psql postgres://app:pa55@db:5432/app",
            "psql postgres://app:••••••@db:5432/app",
        ),
        // Authorization with any scheme, X-…-Key and X-…-Token headers.
        (
            "curl -H 'Authorization: Basic YWxpY2U6czNjcmV0' x",
            "curl -H 'Authorization: Basic ••••••' x",
        ),
        (
            "curl -H \"Authorization: token abc\" x",
            "curl -H \"Authorization: token ••••••\" x",
        ),
        (
            "curl -H 'Authorization: Bearer short' x",
            "curl -H 'Authorization: Bearer ••••••' x",
        ),
        (
            "curl -H 'X-Api-Key: abc123' x",
            "curl -H 'X-Api-Key: ••••••' x",
        ),
        (
            "curl -H 'X-Auth-Token: abc123' x",
            "curl -H 'X-Auth-Token: ••••••' x",
        ),
        // Token prefixes.
        (
            "stripe sk_live_51HabcdefghijklmnOP",
            "stripe sk_live_••••••",
        ),
        ("rk_live_51Habcdefghijkl", "rk_live_••••••"),
        ("glpat-abcdefghij1234567890", "glpat-••••••"),
        (
            "key=AIzaSyA-abcdefghijklmnopqrstuvwxyz123",
            "key=AIza••••••",
        ),
        ("npm_abcdefghijklmnopqrstuvwxyz0123456789", "npm_••••••"),
        ("hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", "hf_••••••"),
        ("xapp-1-A0123456789-abcdef", "xapp-••••••"),
        ("xoxe.xoxp-1-abcdefghijk", "xoxe••••••"),
        ("ASIAIOSFODNN7EXAMPLE.", "ASIA••••••."),
        (
            "https://ghp_abcdefghijklmnop@github.com/o/r",
            "https://ghp_••••••@github.com/o/r",
        ),
        (
            &format!("curl -b session={jwt} x"),
            "curl -b session=eyJ•••••• x",
        ),
        // Kept from before.
        ("export GH=ghp_abcdefghijklmnop", "export GH=ghp_••••••"),
        ("AWS AKIAIOSFODNN7EXAMPLE ok", "AWS AKIA•••••• ok"),
        ("xoxb-123456789-abc", "xoxb-••••••"),
    ];
    assert!(rows.len() >= 16);
    for (text, masked) in rows {
        assert_eq!(mask_credentials(text), masked, "{text}");
    }
}

#[test]
fn look_alikes_are_not_masked() {
    let rows = [
        "openssl s_client --key-file=/etc/ssl/key.pem",
        "curl --key client.key --cert client.pem https://x",
        "setxkbmap keyboard=us",
        "git log --author=alice",
        "git commit --author=\"Alice <a@x>\"",
        "sort --key=2 data",
        "  - key: app\n    value: web",
        "TOKENIZERS_PARALLELISM=false python train.py",
        "PWD=/home/alice",
        "AUTH_METHOD=oauth TOKEN_URL=https://x/token",
        "public_key=ssh-ed25519 primary_key=id",
        "docker login --password-stdin -u bob",
        "ansible-playbook --ask-pass site.yml",
        "GITHUB_TOKEN=$GITHUB_TOKEN gh pr create",
        "echo \"${API_KEY}\"",
        "mkdir -p build && cp -pr a b",
        "ssh -p2222 pi@host",
        "docker run -u 1000:1000 -e npm_config_cache=/tmp/npm img",
        "python -c 'from huggingface_hub import hf_hub_download'",
        "ASIAN ASIAPACIFIC2024 AKIA",
        "git clone git@github.com:org/repo.git https://github.com/org/repo",
        "fn check(token: &str, password: String) -> bool {",
        "def login(api_key: str = None): pass",
        "headers = {\"Authorization\": f\"Bearer {token}\", \"api_key\": api_key}",
        "if token:\n    return auth::token::get()",
        "sk-short skill ask-me Bearer ok",
        "-----BEGIN CERTIFICATE-----",
        "the bypass, the passenger and the monkey",
        "llm --max-tokens 4096 -o max_tokens=4096",
        "SSH_AUTH_SOCK=/tmp/agent.sock GIT_ASKPASS=/usr/bin/pass TOKEN_TTL=3600",
        "curl -H \"Authorization: Bearer $GITHUB_TOKEN\" -H 'X-Api-Key: ${API_KEY}' x",
        "**Token:** rotated weekly",
        "docker run -p 8080:80 img",
    ];
    for text in rows {
        assert_eq!(mask_credentials(text), text, "{text}");
    }
}

#[test]
fn a_private_key_is_replaced_by_a_note() {
    assert_eq!(
        mask_credentials(
            "a\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\nNzaC1\n-----END OPENSSH PRIVATE KEY-----\nz"
        ),
        "a\n-----BEGIN OPENSSH PRIVATE KEY-----\n(private key not shown)\n-----END OPENSSH PRIVATE KEY-----\nz"
    );
}

#[test]
fn the_ask_on_record_keeps_the_call_and_only_a_chat_masks_it() {
    let command = "DB_PASSWORD=hunter2 curl -u alice:s3cret -H 'X-Api-Key: abc123' https://x";
    let event = json!({
        "session_id": "s", "cwd": "/p", "hook_event_name": "PermissionRequest",
        "tool_name": "Bash", "tool_input": {"command": command},
    });
    let hook = HookEvent::parse(Host::ClaudeCode, &event.to_string()).expect("a hook event");
    let ask = normalize_input(&hook.ask(None, 60).to_string())
        .expect("a valid ask")
        .ask;
    let on_record = &ask.context.as_ref().expect("the call").text;
    assert_eq!(on_record, &format!("$ {command}"));
    let blocks = context_blocks(&ask, &Capabilities::TELEGRAM, Locale::En);
    assert_eq!(
        blocks[0].text,
        "$ DB_PASSWORD=•••••• curl -u alice:•••••• -H 'X-Api-Key: ••••••' https://x"
    );
}

proptest::proptest! {
    /// Any mix of the pieces the passes look for, in any order, with
    /// multi-byte text between: masking never panics (every cut is on a
    /// character boundary, every edit in order).
    #[test]
    fn masking_never_panics(pieces in proptest::collection::vec(
        proptest::sample::select(vec![
            "=", ":", ": ", "\"", "'", "--", "-p", "-u ", "mysql ", "curl ", "sshpass ", "://",
            "@", "é", "🙂", " ", "\t", "\n", ";", "&", "password", "X-Api-Key", "Authorization",
            "Bearer ", "Basic ", "eyJ", "ghp_", "AKIA", "$", "abc123", "•", "-----BEGIN ",
        ]),
        0..40,
    )) {
        mask_credentials(&pieces.concat());
    }
}
