"""A least-recently-used store bounded in bytes, for what the pages keep
between requests (rendered pages for visitors who are not signed in,
comments as markup): whatever visitors ask for, it never holds more than its
budget, and one huge entry cannot push everything else out."""

import collections
import threading


class BoundedMemo:
    """{key: value} holding at most `max_bytes` (as the caller counts each
    entry's size), the least recently used going first; an entry larger than
    `max_bytes // 8` is not kept. Thread-safe."""

    def __init__(self, max_bytes):
        self.max_bytes = max_bytes
        self.max_entry = max_bytes // 8
        self.bytes = 0
        self._entries = collections.OrderedDict()     # key -> (value, size)
        self._lock = threading.Lock()

    def __len__(self):
        return len(self._entries)

    def get(self, key):
        """The value kept for `key`, or None."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            self._entries.move_to_end(key)
            return entry[0]

    def put(self, key, value, size):
        """Keep `value` under `key`, counted as `size` bytes (the key's size
        included); the least recently used entries go to make room."""
        if size > self.max_entry:
            return
        with self._lock:
            previous = self._entries.pop(key, None)
            if previous is not None:
                self.bytes -= previous[1]
            self._entries[key] = (value, size)
            self.bytes += size
            while self.bytes > self.max_bytes:
                _, (_, dropped) = self._entries.popitem(last=False)
                self.bytes -= dropped

    def clear(self):
        with self._lock:
            self._entries.clear()
            self.bytes = 0
