# The real coding CLIs, pinned: the integration tests drive them against a scripted model
# server on 127.0.0.1 (tests/integrations/). Node.js from Debian when the machine has none.
command -v npm >/dev/null 2>&1 || apt_install nodejs npm
_want_codex=0.169.0
_want_claude=2.1.328
if ! codex --version 2>/dev/null | grep -qF "$_want_codex"; then
  as_root npm install -g --no-fund --no-audit --loglevel=error "@openai/codex@$_want_codex"
fi
if ! claude --version 2>/dev/null | grep -qF "$_want_claude"; then
  as_root npm install -g --no-fund --no-audit --loglevel=error "@anthropic-ai/claude-code@$_want_claude"
fi
_want_gemini=0.61.0
_want_opencode=1.18.33
if ! gemini --version 2>/dev/null | grep -qF "$_want_gemini"; then
  as_root npm install -g --no-fund --no-audit --loglevel=error "@google/gemini-cli@$_want_gemini"
fi
if ! opencode --version 2>/dev/null | grep -qF "$_want_opencode"; then
  as_root npm install -g --no-fund --no-audit --loglevel=error "opencode-ai@$_want_opencode"
fi
