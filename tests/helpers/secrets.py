"""Keys in the shapes that hide them from plain patterns (issue 31), shared by the redaction
tests of memory/base/redact.py and of every entry point: (name, text, a piece that must not
survive)."""

from __future__ import annotations


def _b64url(text: str) -> str:
    import base64

    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


# Shapes that hide a key from the patterns (issue 31): undone before they run.
HIDDEN = [
    (
        "openssh-body-without-header",
        "my key: b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZWQy\n"
        "NTUxOQAAACDxR7kQ2mZ9pL4vN8cW3yT6bH1jK5sF0aE9gU2iO7rP4A\nthen it failed.",
        "NTUxOQAAACDxR7kQ2mZ9",
    ),
    (
        "base64-wrapped-token",
        "cfg Z2hwX2ExQjJhMUIyYTFCMmExQjJhMUIyYTFCMmExQjJhMUIyYTFCMg==",
        "Z2hwX2Ex",
    ),
    (
        "fullwidth-token",
        "key " + fullwidth("sk-ant-api03-Wm4pQ8rT2vX6zB9nK3jH"),
        fullwidth("Wm4pQ8"),
    ),
    (
        "query-key",
        "https://maps.example.com/api/js?key=Qx7RmT2pLw9ZkV4bNc8Hd&libraries=places",
        "Qx7RmT2pLw9ZkV4bNc8Hd",
    ),
    (
        "cloud-secret-in-prose",
        "the aws secret is Jq8rXUtnFEMI/K7MDENG/bPxRfiCYZPLMKEYab1z so rotate it",
        "Jq8rXUtnFEMI",
    ),
    (
        "key-split-by-newline",
        "sk-ant-api03-Wm4pQ8rT2vX6\nzB9nK3jH7fD1sL5gY0cA then",
        "zB9nK3jH7fD1",
    ),
    ("key-split-early", "token sk-ant-ap\ni03-Wm4pQ8rT2vX6zB9nK3jH7fD1 x", "Wm4pQ8rT2vX6"),
    (
        "google-key-in-a-urlsafe-b64-url",
        "u=" + _b64url("https://x.io/m?key=AIzaSyA1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6"),
        _b64url("https://x.io/m?key=AIzaSyA1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6")[10:30],
    ),
]
