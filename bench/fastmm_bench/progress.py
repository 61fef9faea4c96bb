# SPDX-License-Identifier: MIT
"""The progress bar bench/run draws on stderr (a line every 10% when stderr is not a terminal)."""

import shutil
import sys
import time


def fmt_duration(seconds):
    seconds = int(seconds + 0.5)
    if seconds < 60:
        return "%ds" % seconds
    return "%dm%02ds" % (seconds // 60, seconds % 60)


class Progress:
    def __init__(self, total, stream=sys.stderr):
        self.total, self.done, self.stream = total, 0, stream
        self.start = time.monotonic()
        self.tty = stream.isatty()
        self.last_pct = -10
        self.label = ""

    def step(self, label):
        self.done += 1
        self.label = label
        self.draw()

    def draw(self):
        pct = 100.0 * self.done / max(1, self.total)
        elapsed = time.monotonic() - self.start
        eta = elapsed / self.done * (self.total - self.done) if self.done else 0
        width = 30
        filled = int(width * self.done / max(1, self.total))
        text = "[%s%s] %3d%% %d/%d runs, %s elapsed, ~%s left  %s" % (
            "#" * filled, "." * (width - filled), pct, self.done, self.total,
            fmt_duration(elapsed), fmt_duration(eta), self.label)
        if self.tty:
            cols = shutil.get_terminal_size((100, 20)).columns
            self.stream.write("\r" + text[:cols - 1].ljust(cols - 1))
            self.stream.flush()
        elif pct - self.last_pct >= 10 or self.done == self.total:
            self.last_pct = pct
            self.stream.write(text + "\n")
            self.stream.flush()

    def finish(self):
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()
