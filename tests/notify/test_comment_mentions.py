"""@mentions in comments: which accounts a name means, the mail with the
reason "Mentioned" (once, as the preferences say, only to people who may
see the bug and the comment), the webhook event, and the links on the bug
page (only to accounts the visitor may see; none for a visitor who may not
match accounts)."""

import re

import pytest

from accounts import ADMIN, ADMIN_PASSWORD
from bug_support import (
    NA,
    SHOWN,
    add_bug_group,
    control,
    editbugs_only_for_members,
    file_bug,
    grant_visibility,
    set_param,
)
from bugsvc.bugs import markup, mentions
from bugsvc.services import comment as comment_service, notification, webhook as webhook_service
from notify_support import deliver, use_smtp
from page_support import Browser


DEV, DEV2, QA = "dana@example.com", "dana@other.example.com", "quinn@example.com"


@pytest.fixture
def people(services, smtp):
    use_smtp(services, smtp)
    set_param(services, "urlbase", "http://bugs.example.com/")
    services.add_user(DEV, password="dana-password-1", real_name="Dana Dev")
    services.add_user(DEV2, real_name="Other Dana")
    services.add_user(QA, password="quinn-password-1", real_name="Quinn Q A")
    services.add_user("gone@example.com", real_name="Gone Away", disabled_text="left")
    return services


def comment(services, bug_id, text, as_user=ADMIN, **more):
    return services.call(comment_service.add, dict({"id": bug_id, "comment": text}, **more),
                         as_user=as_user)["id"]


def test_a_name_means_one_enabled_account_or_nobody(people):
    with people.db.transaction() as conn:
        found = mentions.resolve(conn, ["dana@example.com", "quinn", "dana", "gone", "nobody",
                                        "quinnqa", "danadev"])
        ids = dict(conn.execute("SELECT login, id FROM users").fetchall())
    # "dana" means two accounts; "gone" is disabled; real names are not logins.
    assert found == {"dana@example.com": ids[DEV], "quinn": ids[QA]}


def test_the_names_in_a_comment_not_in_its_code_nor_mail_addresses():
    assert markup.mention_names("cc @Dana, @quinn.\nmail dana@example.com `@code`", True) == [
        "dana", "quinn"]
    assert markup.mention_names("@a " * 200) == ["a"]
    assert len(markup.mention_names(" ".join(f"@n{i}" for i in range(500)))) == \
        markup.MAX_MENTIONS


def test_a_mention_mails_the_person_once_with_its_reason(people, smtp):
    bug_id = file_bug(people, cc=[QA])
    deliver(people)
    smtp.mails.clear()
    comment(people, bug_id, "@dana@example.com and @quinn, look (also @quinn again)")
    deliver(people)
    [to_dev] = smtp.to(DEV)
    assert to_dev["X-Bugzilla-Reason"] == "Mentioned"
    assert "You were mentioned in a comment." in to_dev.get_content()
    assert "@dana@example.com and @quinn" in to_dev.get_content()
    [to_qa] = smtp.to(QA)                   # on the CC list and mentioned: one mail
    assert to_qa["X-Bugzilla-Reason"] == "CC Mentioned"
    assert smtp.to(DEV2) == []


def test_no_mail_to_oneself_nor_to_who_turned_it_off(people, smtp):
    bug_id = file_bug(people)
    people.call(notification.update_email_settings,
                {"relationships": {"mentioned": {"comment": False}}}, as_user=QA)
    deliver(people)
    comment(people, bug_id, "I, @dana@example.com, ask @quinn", as_user=DEV)
    deliver(people)
    assert smtp.to(DEV) == [] and smtp.to(QA) == []


def test_no_mail_about_a_bug_the_person_cannot_see(people, smtp):
    group = add_bug_group(people, "secret", members=[DEV])
    control(people, group, SHOWN, NA)
    bug_id = file_bug(people, groups=["secret"])
    deliver(people)
    comment(people, bug_id, "@dana@example.com @quinn see this")
    deliver(people)
    assert [mail["X-Bugzilla-Reason"] for mail in smtp.to(DEV)] == ["Mentioned"]
    assert smtp.to(QA) == []


def test_a_private_comment_mentions_only_insiders(people, smtp):
    add_bug_group(people, "staff", members=[DEV])
    set_param(people, "insidergroup", "staff")
    bug_id = file_bug(people)
    deliver(people)
    comment(people, bug_id, "@dana@example.com @quinn secret plans", is_private=True)
    deliver(people)
    assert [mail["X-Bugzilla-Reason"] for mail in smtp.to(DEV)] == ["Mentioned"]
    assert smtp.to(QA) == []


def test_webhooks_hear_of_mentions_as_their_owner_may_see_them(people, receiver):
    set_param(people, "webhooks_enabled", "1")
    set_param(people, "webhooks_allow_private_addresses", "1")
    people.call(webhook_service.create, {"name": "mentions", "url": receiver.url,
                                         "events": ["mention"], "product": "TestProduct"},
                as_user=ADMIN)
    bug_id = file_bug(people)
    comment_id = comment(people, bug_id, "@dana@example.com please look")
    comment(people, bug_id, "nobody mentioned here")
    deliver(people)
    [call] = receiver.calls
    body = call["json"]
    assert body["event"]["action"] == "mention" and body["event"]["target"] == "comment"
    assert body["event"]["routing_key"] == "comment.mention"
    assert body["event"]["mentions"] == [DEV]
    assert body["bug"]["comment"]["id"] == comment_id


# The pages -----------------------------------------------------------------------------

def test_the_page_links_mentions_for_those_who_may_see_the_accounts(people, app):
    bug_id = file_bug(people)
    comment(people, bug_id, "@dana@example.com and **@quinn** please", is_markdown=True)
    comment(people, bug_id, "plain @quinn and @nobody")
    browser = Browser(app)
    browser.login(ADMIN, ADMIN_PASSWORD)
    page = browser.get(f"/show_bug.cgi?id={bug_id}").text
    assert page.count('class="mention"') == 3, re.findall(r'comment-text.{0,400}', page)
    assert f'email1={DEV}" title="Dana Dev &lt;{DEV}&gt;"' in page
    assert ">@dana@example.com</a>" in page
    assert "@nobody</pre>" in page
    anonymous = Browser(app).get(f"/show_bug.cgi?id={bug_id}").text
    assert 'class="mention"' not in anonymous and "Dana Dev" not in anonymous


def test_no_link_to_an_account_hidden_by_visibility_groups(people, app):
    set_param(people, "usevisibilitygroups", "1")
    editbugs_only_for_members(people)          # else everyone shares editbugs
    add_bug_group(people, "qa", members=[QA], with_admin=False)
    grant_visibility(people, "qa", "qa")           # Quinn sees the members of qa
    bug_id = file_bug(people)
    comment(people, bug_id, "@dana@example.com and @quinn")
    browser = Browser(app)
    browser.login(QA, "quinn-password-1")         # no grant on a group of Dana's
    page = browser.get(f"/show_bug.cgi?id={bug_id}").text
    assert "Dana Dev" not in page
    assert page.count('class="mention"') == 1       # @quinn, a member of qa
