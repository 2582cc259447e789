"""Words and texts the generator draws from: names, products, components,
bug summaries, comment bodies, attachments. Pools are built once from a
seeded random generator, so the same seed gives the same database."""

FIRST_NAMES = (
    "Ada", "Alan", "Alice", "Amir", "Anna", "Ben", "Carla", "Chen", "Dana", "David", "Elena",
    "Emma", "Farid", "Grace", "Hana", "Igor", "Ines", "Jack", "Jana", "Joao", "Karin", "Kenji",
    "Lars", "Lea", "Luca", "Maria", "Mateo", "Mei", "Nadia", "Noah", "Olga", "Omar", "Paul",
    "Priya", "Rosa", "Sam", "Sara", "Tom", "Uma", "Yusuf",
)
LAST_NAMES = (
    "Abe", "Bauer", "Costa", "Dubois", "Eriksen", "Fischer", "Garcia", "Hansen", "Ivanova",
    "Jensen", "Kowalski", "Lopez", "Meyer", "Novak", "Okafor", "Patel", "Quinn", "Rossi", "Sato",
    "Schmidt", "Silva", "Smith", "Tanaka", "Uddin", "Varga", "Weber", "Wong", "Yilmaz", "Zhang",
    "Nguyen",
)
PRODUCT_NAMES = (
    "Core", "Toolkit", "Mail", "Calendar", "Browser", "Server", "Infrastructure", "Website",
    "Documentation", "Android App", "iOS App", "Desktop Client", "Build System", "Release",
    "Payments", "Identity", "Search", "Analytics", "Messaging", "Storage", "Networking",
    "Graphics", "Media", "Accessibility", "Localization", "Security", "Developer Tools",
    "Plugins", "Sync", "Telemetry", "Installer", "Updater", "Printing", "Maps", "Contacts",
    "Notes", "Photos", "Music", "Video", "Office", "Spreadsheet", "Presentation", "Editor",
    "Terminal", "Shell", "Kernel", "Drivers", "Firmware", "Cloud Console", "Command Line",
    "API Gateway", "Scheduler", "Billing", "Support Portal", "Knowledge Base", "Marketplace",
    "Community", "Testing", "Fuzzing", "Benchmarks",
)
COMPONENT_NAMES = (
    "General", "Build", "User Interface", "Networking", "Storage", "Security", "Preferences",
    "Installer", "Accessibility", "Localization", "Printing", "Search", "Sync", "Graphics",
    "Audio", "Video", "Layout", "JavaScript", "Scheduler", "Database", "API", "Command Line",
    "Documentation", "Testing", "Performance", "Memory", "Startup", "Crash Reporting",
    "Notifications", "Import/Export", "Authentication", "Permissions", "Logging", "Packaging",
)
KEYWORDS = (
    "crash", "regression", "perf", "memory-leak", "hang", "dataloss", "security", "ux",
    "accessibility", "l10n", "intermittent", "testcase", "steps-to-reproduce", "qawanted",
    "meta", "polish", "api-change", "dev-doc-needed", "good-first-bug", "topcrash",
    "feature", "sec-high", "sec-low", "privacy", "compat", "flaky", "blocker-candidate",
    "needs-design", "papercut", "upstream",
)
# Words a quicksearch looks for: each appears in a share of the summaries.
SYMPTOMS = (
    "crashes", "hangs", "leaks memory", "times out", "is slow", "corrupts data", "flickers",
    "shows the wrong value", "fails silently", "throws an exception", "renders blank",
    "loses focus", "ignores the setting", "double-counts", "truncates text", "deadlocks",
)
SUBJECTS = (
    "Login page", "Settings dialog", "Attachment upload", "Search results", "Sync engine",
    "Startup", "Print preview", "Export to CSV", "Import wizard", "Notification center",
    "Tab bar", "Address book", "Calendar view", "Video player", "Spell checker",
    "Download manager", "History sidebar", "Password manager", "Update checker",
    "Crash reporter", "Bookmark toolbar", "Font picker", "Image viewer", "Scroll bar",
    "Context menu", "Keyboard shortcut", "Drag and drop", "Clipboard", "Status bar",
    "Session restore", "Proxy settings", "Certificate dialog",
)
CONTEXTS = (
    "when the network is offline", "after resuming from sleep", "with a large profile",
    "on high-DPI screens", "with right-to-left text", "after an update", "on first run",
    "when two windows are open", "with a slow disk", "under memory pressure",
    "with unicode file names", "in private mode", "with a screen reader", "on ARM builds",
    "when the clock changes", "with 10,000 items", "", "", "", "",
)
SENTENCES = (
    "Steps to reproduce: open the dialog, change the value and press OK.",
    "Expected result: the value is saved. Actual result: it is reset.",
    "I can reproduce this on the latest nightly build.",
    "This started after the last release; the previous one was fine.",
    "Attaching a log with debug output enabled.",
    "Confirming, I see the same on my machine.",
    "Could this be related to the cache changes from last month?",
    "The regression range points at the refactoring of the storage layer.",
    "Marking as a regression and raising the priority.",
    "I have a patch that fixes it for me; it needs a test.",
    "Review comments addressed in the new version of the patch.",
    "Landed on the main branch; please verify with tomorrow's build.",
    "Verified fixed with the build from this morning.",
    "Still happens with the fix applied, reopening.",
    "Not reproducible any more, probably fixed by the rewrite.",
    "This is a duplicate of an older report, but that one has less detail.",
    "Stack trace: at storage.flush (storage.c:412) at main.loop (main.c:88)",
    "Memory grows by about 40 MB per hour while the window is idle.",
    "Works in safe mode, so an add-on or setting is involved.",
    "The error console shows: TypeError: item is undefined.",
    "Needinfo from the reporter: which version of the operating system is this?",
    "It happens about once in ten runs on the test machines.",
    "The profiler shows most of the time spent in layout.",
    "We should add a telemetry probe before deciding.",
    "Moving to the right component.",
    "Lowering severity: there is an easy workaround.",
    "The workaround is to restart after changing the setting.",
    "Security-sensitive: please keep the discussion in this bug.",
    "Backported to the stable branch.",
    "Documentation updated to describe the new behaviour.",
    "Thanks for the report! This is a known limitation of the current design.",
    "I bisected it to a change in the networking code.",
    "A minimal test case is attached.",
    "The CPU usage goes to 100% on one core until the process is killed.",
    "Screenshot attached; note the missing icons in the toolbar.",
    "Clearing the cache did not help.",
    "This affects a lot of users according to the crash statistics.",
    "Let's discuss the approach in the weekly meeting.",
    "Closing as WONTFIX: the old behaviour is intended.",
    "Patch looks good to me; one nit about the variable name.",
)
PATCH_LINES = (
    "--- a/src/storage.c", "+++ b/src/storage.c", "@@ -410,7 +410,9 @@ flush(struct store *s)",
    "-    write(s->fd, s->buf, s->len);", "+    if (s->len > 0)",
    "+        write(s->fd, s->buf, s->len);",
    "     s->len = 0;", " }", "+/* Avoid writing empty buffers: see the bug. */",
)
LOG_LINES = (
    "[INFO] starting worker 3", "[WARN] retrying request after timeout",
    "[ERROR] flush failed: resource temporarily unavailable", "[DEBUG] cache hit ratio 0.82",
    "[INFO] session restored with 14 windows", "[ERROR] assertion failed: len <= capacity",
)


def comment_pool(rng, size=4096):
    """`size` comment bodies of one to five sentences (about 250 characters)."""
    pool = []
    for _ in range(size):
        count = rng.choice((1, 2, 2, 3, 3, 4, 5))
        pool.append(" ".join(rng.choice(SENTENCES) for _ in range(count)))
    return pool


def summary_pool(rng, size=8192):
    """`size` bug summaries 'Subject symptom context'."""
    pool = []
    for _ in range(size):
        text = f"{rng.choice(SUBJECTS)} {rng.choice(SYMPTOMS)} {rng.choice(CONTEXTS)}".strip()
        pool.append(text)
    return pool


def attachment_pool(rng, size=64):
    """(file name, content type, is_patch, data bytes, summary) of small attachments."""
    pool = []
    for number in range(size):
        kind = number % 3
        if kind == 0:
            lines = [rng.choice(PATCH_LINES) for _ in range(rng.randint(8, 40))]
            pool.append((f"fix-{number}.patch", "text/plain", 1, "\n".join(lines).encode(),
                         "Proposed fix"))
        elif kind == 1:
            lines = [rng.choice(LOG_LINES) for _ in range(rng.randint(10, 60))]
            pool.append((f"debug-{number}.log", "text/plain", 0, "\n".join(lines).encode(),
                         "Debug log"))
        else:
            data = bytes(rng.getrandbits(8) for _ in range(rng.randint(300, 1500)))
            pool.append((f"screenshot-{number}.png", "image/png", 0, b"\x89PNG\r\n\x1a\n" + data,
                         "Screenshot"))
    return pool
