"""The report at the end of a run: what was carried, per kind, and what was
not, with the reason, grouped so that a thousand accounts without an
address make one line with a few examples, not a thousand lines."""

import threading


# The kinds counted, in the order the report lists them.
KINDS = ("classifications", "products", "components", "versions", "milestones", "keywords",
         "fields", "field values", "flag types", "groups", "group controls",
         "groups that are members of groups", "group bless grants", "group visibility grants",
         "accounts", "group memberships", "memberships granted by a regexp",
         "memberships derived from another group", "bugs", "aliases",
         "cc entries", "dependencies", "see also links", "see also links rewritten", "flags",
         "comments", "comment tags", "personal tags", "attachments", "attachment bytes",
         "history changes")
EXAMPLES = 10


class Report:
    """Counts and reasons, gathered by a run (thread-safe)."""

    def __init__(self, dry_run=False):
        self.dry_run = dry_run
        self.counts = {}
        self.problems = {}          # (kind, reason) -> [examples], count
        self.notes = []
        self._lock = threading.Lock()

    def count(self, kind, amount=1):
        with self._lock:
            self.counts[kind] = self.counts.get(kind, 0) + amount

    def not_carried(self, kind, what, why):
        """`what` (a name or id) of `kind` could not be carried, because `why`."""
        with self._lock:
            examples, total = self.problems.get((kind, why), ([], 0))
            if len(examples) < EXAMPLES and what not in examples:
                examples.append(what)
            self.problems[(kind, why)] = (examples, total + 1)

    def note(self, text):
        """A remark for the operator (what to do after the import)."""
        with self._lock:
            if text not in self.notes:
                self.notes.append(text)

    def problem_count(self):
        return sum(total for _, total in self.problems.values())

    def lines(self):
        """The report as lines of text."""
        head = "Would carry" if self.dry_run else "Carried"
        out = [f"{head}:"]
        known = [kind for kind in KINDS if kind in self.counts]
        others = sorted(kind for kind in self.counts if kind not in KINDS)
        for kind in known + others:
            out.append(f"  {kind}: {self.counts[kind]:,}")
        if len(out) == 1:
            out.append("  nothing")
        if self.problems:
            out.append(f"Not carried ({self.problem_count():,}):")
            for (kind, why), (examples, total) in sorted(self.problems.items()):
                shown = ", ".join(str(example) for example in examples)
                more = f" and {total - len(examples):,} more" if total > len(examples) else ""
                out.append(f"  {kind}: {total:,} ({why}): {shown}{more}")
        else:
            out.append("Not carried: nothing.")
        for note in self.notes:
            out.append(f"Note: {note}")
        return out

    def as_dict(self):
        return {"counts": dict(self.counts),
                "not_carried": [{"kind": kind, "reason": why, "count": total,
                                 "examples": list(examples)}
                                for (kind, why), (examples, total)
                                in sorted(self.problems.items())],
                "notes": list(self.notes)}
