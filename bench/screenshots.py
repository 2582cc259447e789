"""The README's screenshots, taken again from a seeded database: the home
page of a busy user, a bug list and a bug page, in headless Chromium.

    python -m bench.screenshots [--bugs 2000] [--out bench/screenshots]

It seeds a throwaway database (bench.seed), starts `python bugsvc.py` on a
free loopback port, gives the seeded user with the most open bugs a
password, a flag request and a few bugs to follow (over REST, as the
administrator), signs that user in through the sign-in form and saves
home.png, buglist.png and bug.png. It needs Debian's chromium and
chromium-driver and Selenium (the test extra); nothing is downloaded.
"""

import argparse
import base64
import json
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

from . import seed as seeding


ROOT = Path(__file__).resolve().parent.parent
OUT = Path(__file__).resolve().parent / "screenshots"
PASSWORD = "screenshot password 1"
FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--no-first-run", "--disable-quic", "--hide-scrollbars", "--force-device-scale-factor=1")


class Service:
    """bugsvc on a free loopback port over `db_path`."""

    def __init__(self, db_path, log_path):
        self.log = open(log_path, "wb")
        self.process = subprocess.Popen([sys.executable, "bugsvc.py", "--db", str(db_path),
                                         "--port", "0"], cwd=ROOT, stdout=subprocess.PIPE,
                                        stderr=self.log, stdin=subprocess.DEVNULL)
        while True:
            line = self.process.stdout.readline().decode()
            if not line:
                raise RuntimeError(f"bugsvc did not start; see {log_path}")
            if "serving http://" in line:
                self.url = line.split("serving ", 1)[1].split("/rest")[0]
                break
        self.key = None

    def rest(self, method, path, body=None, **query):
        query = dict(query, Bugzilla_api_key=self.key) if self.key else query
        url = f"{self.url}/rest{path}?{urllib.parse.urlencode(query, doseq=True)}"
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(url, data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=20)
        self.process.stdout.close()
        self.log.close()


def busiest_user(db_path):
    """(login, a bug of theirs with the most comments, a product with many
    of their bugs) of the account with the most open bugs assigned."""
    conn = sqlite3.connect(str(db_path))
    try:
        user_id, login = conn.execute(
            "SELECT u.id, u.login FROM bugs b JOIN users u ON u.id = b.assigned_to"
            " WHERE b.status IN ('UNCONFIRMED', 'CONFIRMED', 'IN_PROGRESS')"
            " AND b.id NOT IN (SELECT bug_id FROM bug_groups)"
            " GROUP BY u.id, u.login ORDER BY COUNT(*) DESC, u.id LIMIT 1").fetchone()
        bug_id = conn.execute(
            "SELECT b.id FROM bugs b JOIN comments c ON c.bug_id = b.id"
            " WHERE b.assigned_to = ? AND b.id NOT IN (SELECT bug_id FROM bug_groups)"
            " GROUP BY b.id ORDER BY (SELECT COUNT(*) FROM attachments a WHERE a.bug_id = b.id"
            " AND a.is_private = 0) DESC, COUNT(*) DESC, b.id LIMIT 1", (user_id,)).fetchone()[0]
        product = conn.execute(
            "SELECT p.name FROM bugs b JOIN products p ON p.id = b.product_id"
            " WHERE b.assigned_to = ? GROUP BY p.name ORDER BY COUNT(*) DESC LIMIT 1",
            (user_id,)).fetchone()[0]
        others = [row[0] for row in conn.execute(
            "SELECT id FROM bugs WHERE assigned_to <> ? AND id NOT IN"
            " (SELECT bug_id FROM bug_groups) ORDER BY last_change_time DESC LIMIT 4",
            (user_id,))]
    finally:
        conn.close()
    return login, bug_id, product, others


def prepare(service, login, bug_id, others):
    """A password for `login`, a review requested of it, bugs it follows."""
    token = service.rest("GET", "/login", login=seeding.ADMIN_EMAIL,
                         password=seeding.ADMIN_PASSWORD)["token"]
    service.key = service.rest("POST", "/api_key", {"description": "screenshots"},
                               Bugzilla_token=token)["api_key"]
    service.rest("PUT", f"/user/{login}", {"password": PASSWORD})
    types = service.rest("GET", "/flag_type/" + urllib.parse.quote(
        service.rest("GET", f"/bug/{others[0]}", include_fields="product")["bugs"][0][
            "product"]))["bug"]
    requestable = [t for t in types if t["is_requesteeble"] and "?" in t["values"]]
    if requestable:
        service.rest("PUT", f"/bug/{others[0]}", {"flags": [
            {"type_id": requestable[0]["id"], "status": "?", "requestee": login}]})
    for other in others:
        service.rest("PUT", f"/bug/{other}", {"cc": {"add": [login]}})
    service.rest("POST", f"/bug/{bug_id}/attachment", {
        "ids": [bug_id], "file_name": "startup.log", "summary": "Log of a failed start",
        "content_type": "text/plain",
        "data": base64.b64encode(b"12:00:01 starting\n12:00:02 crash\n").decode()})


def shoot(url, login, bug_id, product, out, size):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service as DriverService
    from selenium.webdriver.common.by import By
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in FLAGS + (f"--window-size={size.split(',')[0]},900",):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=DriverService("/usr/bin/chromedriver"), options=options)
    try:
        driver.get(url + "/login")
        driver.find_element(By.ID, "Bugzilla_login").send_keys(login)
        driver.find_element(By.ID, "Bugzilla_password").send_keys(PASSWORD)
        driver.find_element(By.CSS_SELECTOR, "form.stacked button[type=submit]").click()
        deadline = time.monotonic() + 30
        while "My work" not in driver.page_source:
            if time.monotonic() > deadline:
                raise RuntimeError("signing in did not reach the home page")
            time.sleep(0.1)
        pages = (("home.png", "/"),
                 ("buglist.png", "/buglist.cgi?" + urllib.parse.urlencode(
                     {"product": product, "bug_status": "__open__",
                      "columnlist": "bug_severity,priority,assigned_to,bug_status,short_desc,"
                                    "changeddate", "order": "changeddate DESC"})),
                 ("bug.png", f"/show_bug.cgi?id={bug_id}"))
        for name, path in pages:
            driver.get(url + path)
            width, height = (int(v) for v in size.split(","))
            full = driver.execute_script("return document.documentElement.scrollHeight")
            shot = driver.execute_cdp_cmd("Page.captureScreenshot", {
                "format": "png", "captureBeyondViewport": True,
                "clip": {"x": 0, "y": 0, "width": width, "height": min(full, height),
                         "scale": 1}})
            (out / name).write_bytes(base64.b64decode(shot["data"]))
    finally:
        driver.quit()


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.screenshots",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--bugs", type=int, default=2000, help="bugs to seed (default 2000)")
    parser.add_argument("--out", default=str(OUT), help="folder of the PNG files")
    parser.add_argument("--size", default="1280,900",
                        help="width and (most) height of each picture (default 1280,900)")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="bugsvc-screenshots-"))
    try:
        db_path = work / "screenshots.sqlite"
        seeding.seed(db_path, args.bugs)
        login, bug_id, product, others = busiest_user(db_path)
        service = Service(db_path, work / "service.log")
        try:
            prepare(service, login, bug_id, others)
            shoot(service.url, login, bug_id, product, out, args.size)
        finally:
            service.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"Wrote home.png, buglist.png and bug.png to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
