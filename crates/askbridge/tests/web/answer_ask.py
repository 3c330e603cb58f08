"""Answers an ask on askbridge's web page in a real browser.

Run by crates/askbridge/tests/web.rs: the Rust test creates the ask (and
waits for its outcome through the HTTP API); this script only opens the
page and clicks and types like a person would, checking what the page shows
on the way. It uses Debian's Chromium through Playwright and never
downloads a browser.

Scenarios:
  two-questions  Release 2.4: pick the recommended option card, press Enter,
                 type an "Other" answer, submit; a second tab sees the ask
                 answered elsewhere. Screenshot of the answered page.
  all-types      checkboxes, a yes/no question (nothing picked until the
                 person picks), "Skip question" on an
                 optional text question, a textarea sent with Ctrl+Enter.
  skip-all       "Skip" skips the whole ask.
  several-places an ask to Slack, the web page and Telegram is on the page,
                 which says where else it was asked; Skip skips it.
  reach          on a page whose clock the scenario runs: the ask
                 "Reminded" shows the reminder line once its reminder is
                 due; the ask "Passed on", which the scenario creates
                 (escalated from Slack to the web two seconds later, by
                 the daemon's clock), is not on the page before its time,
                 then is, saying it was passed on; an ask passed on in ten
                 minutes ("Which road?") is not on the page.
  locales        a Thai browser (th-TH) answers the ask to web:thai and a
                 Chinese one (zh-CN) the ask to web:chinese, each checking
                 the page's words against the phrases the server serves
                 for that language; the language switch changes them and
                 is remembered over a reload. Screenshots of both.
  one-ask        the link an agent host shows, /#ask=<id>: only that ask
                 (posted to web:elsewhere) is on the page, not the other
                 pending one, and it is answered there; then the other ask,
                 answered in the agent's host (the API with the ask's
                 host key from ASKBRIDGE_HOST_KEY stands in for it), reads
                 "Answered in the terminal".

Exit status 0 when every check passed; otherwise 1 with the reason on
stderr (and a screenshot named *-failure.png next to the requested one).
"""

import argparse
import json
import os
import re
import sys
import urllib.request
from pathlib import Path
from urllib.parse import urldefrag

from playwright.sync_api import Page, expect, sync_playwright

CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
TIMEOUT_MS = 30_000


NETWORK = []
"""Every response the pages got, printed when a scenario fails."""


class Problems:
    """Console errors and uncaught exceptions seen on a page."""

    def __init__(self, page: Page, name: str):
        self.items = []
        page.on("response", lambda r: NETWORK.append(f"{name}: {r.status} {r.request.method} {r.url}"))
        page.on("pageerror", lambda error: self.items.append(f"{name}: uncaught {error}"))
        page.on(
            "console",
            lambda message: self.items.append(f"{name}: console.{message.type}: {message.text}")
            if message.type == "error"
            else None,
        )

    def check(self):
        if self.items:
            raise AssertionError("the page reported errors:\n" + "\n".join(self.items))


class Contexts:
    """Browser contexts (each with its own storage) opened by a scenario."""

    def __init__(self, browser):
        self.browser = browser
        self.opened = []

    def new(self, locale: str = "en-US"):
        """A context whose browser speaks `locale` (its Accept-Language)."""
        context = self.browser.new_context(viewport={"width": 900, "height": 760}, locale=locale)
        context.set_default_timeout(TIMEOUT_MS)
        self.opened.append(context)
        return context

    def pages(self):
        return [page for context in self.opened for page in context.pages]


def open_page(context, url: str, name: str):
    page = context.new_page()
    problems = Problems(page, name)
    page.goto(url)
    expect(page.locator("#conn")).to_have_attribute("data-state", "live")
    return page, problems


def panel(page: Page):
    return page.locator("#panel")


def two_questions(contexts: Contexts, url: str, screenshot: Path):
    context = contexts.new()
    page, problems = open_page(context, url, "tab 1")
    other_tab, other_problems = open_page(context, url, "tab 2")
    box = panel(page)
    expect(box.get_by_role("heading", name="Release 2.4")).to_be_visible()
    expect(box.locator(".step-count")).to_have_text("1/2")
    expect(box.locator(".question")).to_have_text("Where should I deploy the build?")

    # One marker for the recommended option, and its label shown without "(Recommended)".
    expect(box.locator(".badge")).to_have_count(1)
    expect(box.locator(".badge")).to_have_text("Recommended")
    expect(box.locator(".badge .icon-star")).to_have_count(1)
    expect(box.locator(".card-label").first).to_have_text("Staging")
    if "(Recommended)" in box.inner_text():
        raise AssertionError("the panel shows a doubled (Recommended) marker")
    expect(box.get_by_text("safe, reversible")).to_be_visible()

    # Esc collapses the panel; the toggle expands it again.
    page.keyboard.press("Escape")
    expect(box.locator("#panel-body")).to_have_count(0)
    box.get_by_role("button", name="Expand the question").click()
    expect(box.locator("#panel-body")).to_be_visible()

    # Question 1: click the option card, then Enter for Next.
    box.locator("label.card", has_text="Staging").click()
    expect(box.get_by_role("radio", name=re.compile("^Staging"))).to_be_checked()
    page.screenshot(path=str(screenshot.with_name("web-question.png")))
    page.keyboard.press("Enter")

    # Question 2: the person's own words in "Other".
    expect(box.locator(".step-count")).to_have_text("2/2")
    expect(box.locator(".question")).to_have_text("Who should be told?")
    box.get_by_label("Other").fill("Tell Alice in person")
    expect(box.get_by_role("radio", checked=True)).to_have_count(0)
    box.get_by_role("button", name="Back").click()
    expect(box.get_by_role("radio", name=re.compile("^Staging"))).to_be_checked()
    box.get_by_role("button", name="Next").click()
    expect(box.get_by_label("Other")).to_have_value("Tell Alice in person")
    box.get_by_role("button", name="Submit").click()

    # The summary stays in the timeline; the panel is gone; the composer rests.
    reply = page.locator(".entry.reply")
    expect(reply.locator(".summary")).to_contain_text("Tell Alice in person")
    expect(reply.locator(".status")).to_contain_text("Answered")
    expect(box).to_be_hidden()
    expect(page.locator("#composer-input")).to_be_disabled()

    # The other tab heard about it and says so.
    expect(panel(other_tab)).to_be_hidden()
    expect(other_tab.locator(".entry.reply .status")).to_contain_text("Answered elsewhere")
    expect(other_tab.locator("#notice")).to_contain_text("answered elsewhere")

    page.screenshot(path=str(screenshot))
    other_tab.screenshot(path=str(screenshot.with_name("web-elsewhere.png")))

    # A reload keeps the conversation: ended asks come back as history.
    other_tab.reload()
    expect(other_tab.locator(".entry.reply .summary")).to_contain_text("Tell Alice in person")
    expect(panel(other_tab)).to_be_hidden()
    problems.check()
    other_problems.check()


def all_types(contexts: Contexts, url: str, screenshot: Path):
    page, problems = open_page(contexts.new(), url, "tab")
    box = panel(page)
    expect(box.get_by_role("heading", name="Set-up")).to_be_visible()

    # 1/4 multi: checkboxes, one recommended.
    expect(box.locator(".step-count")).to_have_text("1/4")
    expect(box.get_by_role("checkbox")).to_have_count(3)
    expect(box.locator(".badge")).to_have_count(1)
    box.get_by_role("checkbox", name=re.compile("^Email")).check()
    box.get_by_role("checkbox", name=re.compile("^Chat")).check()
    box.get_by_role("button", name="Next").click()

    # 2/4 confirm: Yes and No, neither picked, so Next alone does not
    # answer "no" for the person; key 1 picks Yes.
    expect(box.locator(".step-count")).to_have_text("2/4")
    expect(box.get_by_role("radio")).to_have_count(2)
    expect(box.get_by_role("radio", checked=True)).to_have_count(0)
    box.get_by_role("button", name="Next").click()
    expect(box.locator(".field-error")).to_be_visible()
    expect(box.locator(".step-count")).to_have_text("2/4")
    box.get_by_role("radio", name="No").focus()
    page.keyboard.press("1")
    expect(box.get_by_role("radio", name="Yes")).to_be_checked()
    expect(box.locator(".field-error")).to_be_hidden()
    page.screenshot(path=str(screenshot.with_name("web-confirm.png")))
    box.get_by_role("button", name="Next").click()

    # 3/4 optional text: placeholder shown, skipped.
    expect(box.locator(".step-count")).to_have_text("3/4")
    expect(box.get_by_role("textbox")).to_have_attribute("placeholder", "e.g. atlas")
    box.get_by_role("button", name="Skip question").click()

    # 4/4 textarea: Enter makes a new line, Ctrl+Enter submits.
    expect(box.locator(".step-count")).to_have_text("4/4")
    area = box.locator("textarea")
    expect(area).to_have_attribute("placeholder", "Free text")
    area.click()
    page.keyboard.type("first line")
    page.keyboard.press("Enter")
    page.keyboard.type("second line")
    page.screenshot(path=str(screenshot.with_name("web-textarea.png")))
    page.keyboard.press("Control+Enter")

    expect(page.locator(".entry.reply .status")).to_contain_text("Answered")
    expect(box).to_be_hidden()
    page.screenshot(path=str(screenshot))
    problems.check()


def skip_and_check(page: Page, box, problems: Problems, screenshot: Path):
    """Skips the ask on the panel, sees it marked skipped, takes the
    screenshot and checks the page reported no errors."""
    box.get_by_role("button", name="Skip", exact=True).click()
    expect(page.locator(".entry.reply .status")).to_contain_text("Skipped")
    expect(box).to_be_hidden()
    page.screenshot(path=str(screenshot))
    problems.check()


def skip_all(contexts: Contexts, url: str, screenshot: Path):
    page, problems = open_page(contexts.new(), url, "tab")
    box = panel(page)
    expect(box.locator(".question")).to_have_text("Which colour?")
    expect(box.locator(".step-count")).to_have_count(0)
    skip_and_check(page, box, problems, screenshot)


def several_places(contexts: Contexts, url: str, screenshot: Path):
    page, problems = open_page(contexts.new(), url, "tab")
    box = panel(page)
    expect(box.locator(".question")).to_have_text("Which colour?")
    expect(box.locator(".also-in")).to_have_text("Also asked in Slack, Telegram")
    skip_and_check(page, box, problems, screenshot)


def reach(contexts: Contexts, url: str, screenshot: Path):
    page = contexts.new().new_page()
    problems = Problems(page, "tab")
    page.clock.install()
    page.goto(url)
    expect(page.locator("#conn")).to_have_attribute("data-state", "live")
    box = panel(page)
    expect(box.get_by_role("heading", name="Reminded")).to_be_visible()
    expect(box.locator(".reminder")).to_have_count(0)
    expect(page.get_by_text("Which way?")).to_have_count(0)

    # Its reminder is due 30 s after it was created.
    page.clock.run_for("00:31")
    expect(box.locator(".reminder")).to_contain_text("⏰ Still waiting for your answer — expires in")
    expect(page.get_by_text("Which way?")).to_have_count(0)

    # An ask passed on to the page two seconds after it is created (its
    # Slack place fails: no Slack here) is not on it before then, by the
    # daemon's clock, and then comes without a reload.
    api(url, "/v1/asks", {
        "to": "slack:C0123", "title": "Passed on", "timeoutSeconds": 600,
        "escalate": [{"afterSeconds": 2, "to": "web"}],
        "questions": [{"id": "q", "header": "Q", "question": "Which way?", "options": ["Left", "Right"]}],
    })
    expect(page.get_by_text("Which way?")).to_have_count(0, timeout=500)
    expect(box.get_by_role("heading", name="Passed on")).to_be_visible()
    expect(box.locator(".passed-on")).to_have_text("↪ Passed on from Slack after 2 s without an answer")
    # One passed on in ten minutes is not on the page yet.
    expect(page.get_by_text("Which road?")).to_have_count(0)
    page.screenshot(path=str(screenshot))
    problems.check()


def api(url: str, path: str, body=None, headers=None):
    """The daemon's HTTP API at the page's origin (no token: the daemon of
    this scenario has none)."""
    base = urldefrag(url).url.rstrip("/")
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Content-Type": "application/json", **(headers or {})}
    request = urllib.request.Request(base + path, data=data, headers=headers)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(request, timeout=TIMEOUT_MS / 1000) as response:
        return json.load(response)


def pending_titled(url: str, title: str) -> str:
    """The id of the pending ask titled `title`."""
    for ask in api(url, "/v1/asks?status=pending")["asks"]:
        if ask["ask"].get("title") == title:
            return ask["id"]
    raise AssertionError(f"no pending ask titled {title!r}")


def one_ask(contexts: Contexts, url: str, screenshot: Path):
    linked = pending_titled(url, "Link only")
    other = pending_titled(url, "Release 2.4")

    # The link: only that ask, answered on the page.
    page, problems = open_page(contexts.new(), url.rstrip("/") + "/#ask=" + linked, "link")
    box = panel(page)
    expect(box.get_by_role("heading", name="Link only")).to_be_visible()
    expect(page.locator(f'.entry[data-ask="{other}"]')).to_have_count(0)
    box.locator("label.card", has_text="Blue").click()
    box.get_by_role("button", name="Submit").click()
    expect(page.locator(".entry.reply .status")).to_contain_text("Answered")
    expect(box).to_be_hidden()
    page.screenshot(path=str(screenshot.with_name("web-link.png")))
    problems.check()

    # The other ask, answered in the agent's host while the page shows it.
    page, problems = open_page(contexts.new(), url, "page")
    expect(panel(page).get_by_role("heading", name="Release 2.4")).to_be_visible()
    api(
        url,
        f"/v1/asks/{other}/reply",
        {"answers": {"deploy": ["Production"]}},
        {"Askbridge-Host-Key": os.environ["ASKBRIDGE_HOST_KEY"]},
    )
    entry = page.locator(f'.entry.reply[data-ask="{other}"] .status')
    expect(entry).to_have_text(re.compile("Answered in the terminal"))
    expect(panel(page)).to_be_hidden()
    page.screenshot(path=str(screenshot))
    problems.check()


def served_phrases(page: Page, tag: str) -> dict:
    """The phrases the server put in the page for one language."""
    data = page.evaluate("JSON.parse(document.getElementById('phrases').textContent)")
    for locale in data["locales"]:
        if locale["tag"] == tag:
            return locale["phrases"]
    raise AssertionError(f"the page serves no phrases for {tag}: {[l['tag'] for l in data['locales']]}")


def with_session(url: str, session: str) -> str:
    return url + ("&" if "#" in url else "#") + "session=" + session


def expect_speaks(page: Page, tag: str, words: dict):
    """The page's fixed words are those of `tag`."""
    expect(page.locator("html")).to_have_attribute("lang", tag)
    expect(page.locator("#conn-text")).to_have_text(words["page_live"])
    expect(page.locator("#composer-send")).to_have_text(words["page_send"])
    expect(page.locator(".languages [aria-pressed=true]")).to_have_attribute("lang", tag)


def open_in(contexts: Contexts, url: str, browser_locale: str, session: str, tag: str, known: dict):
    """Opens the page at `#session=…` in a browser speaking `browser_locale`;
    the page, its problems and the phrases served for `tag`, checked against
    a few `known` ones (so English served under another tag fails)."""
    page, problems = open_page(contexts.new(browser_locale), with_session(url, session), session)
    words = served_phrases(page, tag)
    for name, phrase in known.items():
        assert words[name] == phrase, f"{tag} {name}: {words[name]!r}"
    expect_speaks(page, tag, words)
    return page, problems, words


def speaks_thai(contexts: Contexts, url: str, screenshot: Path):
    known = {"skip": "ข้าม", "answered": "ตอบแล้ว"}
    page, problems, th = open_in(contexts, url, "th-TH", "thai", "th", known)
    box = panel(page)
    expect(box.get_by_role("heading", name="Release 2.5")).to_be_visible()
    expect(box.get_by_role("button", name=th["skip"], exact=True)).to_be_visible()
    expect(box.get_by_role("button", name=th["page_submit"], exact=True)).to_be_visible()
    expect(box.locator(".badge")).to_have_text(th["recommended"])
    expect(box.locator(".other-label")).to_have_text(th["other"])
    expect(page.locator(".entry.agent .entry-action")).to_have_text(th["page_waiting_for_you"])
    expect(page.locator("#composer-input")).to_have_attribute("placeholder", th["page_type_reply"])

    # A Thai error, then the answer.
    box.get_by_role("button", name=th["page_submit"], exact=True).click()
    expect(box.locator(".field-error")).to_have_text(th["page_choose_one"])
    box.locator("label.card", has_text="Production").click()
    box.get_by_role("button", name=th["page_submit"], exact=True).click()
    status = page.locator(".entry.reply .status")
    expect(status).to_have_text(th["answered"])
    expect(box).to_be_hidden()
    expect(page.locator("#composer-input")).to_have_attribute("placeholder", th["page_no_questions"])
    page.screenshot(path=str(screenshot.with_name("web-locales-th.png")))

    # The switch says it all again in English, and the choice outlives a
    # reload even though the browser still asks for Thai.
    en = served_phrases(page, "en")
    page.get_by_role("button", name="English").click()
    expect_speaks(page, "en", en)
    expect(status).to_have_text(en["answered"])
    expect(page.locator(".entry.agent .meta")).to_contain_text(en["page_agent_at"].split("{")[0].strip())
    page.reload()
    expect(page.locator("#conn")).to_have_attribute("data-state", "live")
    expect_speaks(page, "en", en)
    expect(page.locator(".entry.reply .status")).to_have_text(en["answered"])
    page.get_by_role("button", name="ไทย").click()
    expect_speaks(page, "th", th)
    problems.check()


def speaks_chinese(contexts: Contexts, url: str, screenshot: Path):
    known = {"page_submit": "提交", "answered": "已回答"}
    page, problems, zh = open_in(contexts, url, "zh-CN", "chinese", "zh-CN", known)
    box = panel(page)
    expect(box.get_by_role("heading", name="Release 2.6")).to_be_visible()
    expect(box.locator(".step-count")).to_have_text("1/2")
    step_of = zh["page_question_n_of"].replace("{n}", "1").replace("{total}", "2")
    expect(box.locator(".step-count")).to_have_attribute("aria-label", step_of)
    expect(box.get_by_role("button", name=zh["skip"], exact=True)).to_be_visible()
    box.locator("label.card", has_text="Staging").click()
    box.get_by_role("button", name=zh["page_next"], exact=True).click()

    # Yes and no in Chinese.
    expect(box.locator(".step-count")).to_have_text("2/2")
    expect(box.locator(".card-label")).to_have_text([zh["yes"], zh["no"]])
    box.locator("label.card", has_text=zh["yes"]).click()
    expect(box.get_by_role("radio", name=zh["yes"])).to_be_checked()
    expect(box.get_by_role("button", name=zh["page_back"], exact=True)).to_be_visible()
    box.get_by_role("button", name=zh["page_submit"], exact=True).click()
    expect(page.locator(".entry.reply .status")).to_have_text(zh["answered"])
    expect(box).to_be_hidden()
    page.screenshot(path=str(screenshot))
    problems.check()


def locales(contexts: Contexts, url: str, screenshot: Path):
    speaks_thai(contexts, url, screenshot)
    speaks_chinese(contexts, url, screenshot)


SCENARIOS = {
    "two-questions": two_questions,
    "all-types": all_types,
    "skip-all": skip_all,
    "several-places": several_places,
    "reach": reach,
    "locales": locales,
    "one-ask": one_ask,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--scenario", choices=sorted(SCENARIOS), required=True)
    parser.add_argument("--screenshot", type=Path, required=True)
    args = parser.parse_args()
    args.screenshot.parent.mkdir(parents=True, exist_ok=True)

    expect.set_options(timeout=TIMEOUT_MS)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=args.chromium, headless=True, args=CHROMIUM_ARGS
        )
        contexts = Contexts(browser)
        try:
            SCENARIOS[args.scenario](contexts, args.url, args.screenshot)
        except Exception as error:  # report, with a picture of every tab
            for index, page in enumerate(contexts.pages()):
                try:
                    failure = args.screenshot.with_name(f"{args.screenshot.stem}-failure-{index}.png")
                    page.screenshot(path=str(failure))
                    print(f"failure screenshot: {failure}", file=sys.stderr)
                except Exception:  # the page may be gone
                    pass
            print("network:\n  " + "\n  ".join(NETWORK), file=sys.stderr)
            print(f"{args.scenario}: {error}", file=sys.stderr)
            return 1
        finally:
            browser.close()
    print(f"{args.scenario}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
