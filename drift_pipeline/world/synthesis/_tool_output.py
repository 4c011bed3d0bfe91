"""Tool output in agents' sessions: test logs, diffs, fetched pages, mostly noise.

An agent that runs a tool gets its output back as a message of role ``tool`` (spec §10): long,
repetitive, and almost never worth remembering. Nothing here names a slot value, a decision or
a canary, so tool output carries no fact of the world; a memory that keeps it pays for it.
"""

from __future__ import annotations

from collections.abc import Callable

Uniform = Callable[[], float]

_FILES = (
    "src/app/handlers.py",
    "src/app/models.py",
    "src/lib/retry.py",
    "tests/test_handlers.py",
    "docs/index.md",
    "scripts/release.sh",
    "src/lib/cache.py",
    "src/app/views/report.py",
)
_TESTS = (
    "test_handles_empty_input",
    "test_parses_header_row",
    "test_rejects_bad_token",
    "test_rounds_half_up",
    "test_paginates_results",
    "test_retries_on_timeout",
    "test_renders_summary",
    "test_keeps_order",
)
_PATHS = ("/about", "/pricing", "/help/getting-started", "/news/2026/11", "/team", "/contact")
_WORDS = ("orders", "invoice", "summary", "settings", "history", "report", "export", "queue")


def _pick(u: Uniform, options: tuple[str, ...]) -> str:
    return options[int(u() * len(options))]


def _test_log(u: Uniform) -> str:
    count = 3 + int(u() * 4)
    lines = [f"$ pytest -q {_pick(u, _FILES)}"]
    for _ in range(count):
        lines.append(f"{_pick(u, _TESTS)} PASSED [{int(u() * 90) + 10}%]")
    lines.append(f"{count} passed in {1 + u() * 9:.2f}s")
    return "\n".join(lines)


def _diff(u: Uniform) -> str:
    path = _pick(u, _FILES)
    line = 10 + int(u() * 200)
    word = _pick(u, _WORDS)
    return (
        f"diff --git a/{path} b/{path}\n@@ -{line},3 +{line},4 @@\n"
        f"-    {word} = load_{word}(request)\n+    {word} = load_{word}(request, timeout=30)\n"
        f"+    log.debug('loaded {word}')\n     return render({word})"
    )


def _page(u: Uniform) -> str:
    path = _pick(u, _PATHS)
    status = 200 if u() < 0.85 else 304
    size = 4 + int(u() * 60)
    return (
        f"GET https://example.org{path} -> {status} ({size} kB)\n"
        f"<title>{path.strip('/').replace('/', ' ').title() or 'Home'} | Example</title>\n"
        f"links found: {3 + int(u() * 40)}, new: {int(u() * 5)}"
    )


def _search(u: Uniform) -> str:
    word = _pick(u, _WORDS)
    hits = 1 + int(u() * 12)
    lines = [f"$ grep -rn '{word}' src/ | head"]
    for _ in range(min(hits, 4)):
        lines.append(f"{_pick(u, _FILES)}:{10 + int(u() * 300)}:    {word}_id = row['{word}']")
    lines.append(f"({hits} matches)")
    return "\n".join(lines)


def _build(u: Uniform) -> str:
    seconds = 20 + int(u() * 200)
    return (
        f"build #{1000 + int(u() * 9000)} finished: success\n"
        f"steps: install {seconds // 4}s, compile {seconds // 2}s, package {seconds // 4}s\n"
        f"artifact size {1 + u() * 30:.1f} MB"
    )


_OUTPUTS: tuple[Callable[[Uniform], str], ...] = (_test_log, _diff, _page, _search, _build)


def tool_output(u: Uniform) -> str:
    """One tool's output, drawn from the session's uniform stream."""
    return _OUTPUTS[int(u() * len(_OUTPUTS))](u)
